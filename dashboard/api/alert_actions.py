"""Silence, unsilence and acknowledge an alert (``api/queues/<q>/alerts/<rule>/…/``): actions
like any other, through the same guard (operate permission, read-only, same site, audit)."""

from __future__ import annotations

from django.http import HttpRequest

from dashboard.auth.guards import mutation_view
from dashboard.auth.principal import from_request
from dashboard.auth.queue_lookup import queue_ref
from dashboard.forms.alerts import RuleForm, SilenceForm
from dashboard.forms.answer import action_input, valid
from queues.actions.result import ActionResult
from queues.alerts import silences


@mutation_view("silence-alert")
async def silence(request: HttpRequest, queue: str, rule: str) -> ActionResult:
    form = valid(SilenceForm({**action_input(request), "rule": rule}))
    by = (await from_request(request)).username
    slug = (await queue_ref(queue)).slug
    return await silences.silence(slug, rule, form.cleaned_data["minutes"], by)


@mutation_view("unsilence-alert")
async def unsilence(request: HttpRequest, queue: str, rule: str) -> ActionResult:
    valid(RuleForm({"rule": rule}))
    return await silences.unsilence((await queue_ref(queue)).slug, rule)


@mutation_view("acknowledge-alert")
async def acknowledge(request: HttpRequest, queue: str, rule: str) -> ActionResult:
    valid(RuleForm({"rule": rule}))
    by = (await from_request(request)).username
    return await silences.acknowledge((await queue_ref(queue)).slug, rule, by)
