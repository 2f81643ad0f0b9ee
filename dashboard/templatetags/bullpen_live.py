"""The job page's live parts, rendered as its live messages render them (with their digest)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from dashboard.live.part_digest import digested

register = template.Library()


@register.simple_tag(takes_context=True)
def live_part(context: Any, name: str) -> SafeString:
    part = context.template.engine.get_template(name)
    with context.push():
        html = part.render(context)
    return mark_safe(digested(html))  # noqa: S308 - rendered by the template, escaped there
