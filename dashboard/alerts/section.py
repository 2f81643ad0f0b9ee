"""The queue page's "Alerts" section: the rules firing on the queue now (the count rules as the
overview decides them; the rules read from history, the oldest waiting job and schedulers as the
sender does, but for no_workers_seconds, which only the sender can time), the silenced and
acknowledged ones with who holds them, and for those who may act the buttons that silence,
unsilence and acknowledge (the actions of dashboard/api/alert_actions.py). Rendered with the
queue page, so that nothing moves its list after it shows; also a fragment of its own, and the
page reloads after an action, so it is rendered afresh."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboard.auth.guards import page_view
from dashboard.auth.queue_lookup import queue_ref
from dashboard.auth.viewer import can_act_on, kind_on_queue
from dashboard.forms.alerts import SilenceChoiceForm
from queues.alerts.rules import read_rules
from queues.alerts.shown import LOUDNESS, shown_alerts
from queues.alerts.silences import read_holds
from queues.alerts.thresholds import DEFAULTS, read_alerts
from queues.postgres.store_actions import supported
from queues.reads.counts import summary
from queues.reads.keys import QueueRef
from queues.redis import connections


@page_view
async def alerts_fragment(request: HttpRequest, queue: str) -> HttpResponse:
    ref = await queue_ref(queue)
    context = await alerts_context(request, ref)
    if context is None:
        return render(request, "bullpen/_needs_redis.html", {"feature": "alerts"})
    return render(request, "bullpen/_alerts.html", context)


async def alerts_context(request: HttpRequest, ref: QueueRef) -> dict[str, Any] | None:
    """What the section shows of ``ref``; None where alerts need Redis and there is none."""
    if not connections.state_on_redis():
        return None
    found = await summary(ref)
    firing = (await read_alerts([found])).get(ref, [])
    # The history, oldest-waiting and scheduler rules too, when the queue turns them on (one
    # queue: a few reads); a rule that cannot be read now is not shown as firing.
    firing += (await read_rules([found], workers=False)).alerts.get(ref, [])
    now = time.time()
    # Only the rules there are: a hold of any other names nothing to show or act on.
    holds = {
        rule: hold
        for (slug, rule), hold in (await read_holds(now)).items()
        if slug == ref.slug and rule in DEFAULTS
    }
    shown = shown_alerts(firing, holds, now)
    tally = Counter(item.status for item in shown)
    kind = await kind_on_queue(request, ref.slug)
    return {
        "shown": shown,
        # How many of each, loudest first, for the line a phone folds the section under.
        "tally": [(status, tally[status]) for status in LOUDNESS if tally[status]],
        "queue": {"slug": ref.slug, "name": ref.name},
        # Silences and acknowledgements are kept where the queue's store keeps them.
        "can_act": can_act_on(kind, ref.slug) and "silence-alert" in supported(ref),
        # auto_id off: each alert has a menu of its own, none takes the others' ids.
        "silence_form": SilenceChoiceForm(auto_id=False),
    }
