"""The flow tree's element ids: one per job, whatever its queue name or id holds (spaces,
quotes), so that a live update finds the node it is for."""

from __future__ import annotations

import hashlib

from django import template

register = template.Library()


@register.simple_tag
def flow_node_id(queue: str, job_id: object) -> str:
    digest = hashlib.sha256(f"{queue}\0{job_id}".encode()).hexdigest()[:20]
    return f"flow-node-{digest}"
