"""Prometheus ``/metrics``: queue depth per state, recent completions and failures, alerts,
workers, and Bullpen's own health. Protected by ``METRICS_TOKEN`` (compared in constant time)."""

from __future__ import annotations

import hmac
import time
from collections.abc import Iterable

from django.http import HttpRequest, HttpResponse

from queues.alerts import DEFAULTS as ALERT_RULES
from queues.alerts import evaluate
from queues.conf import get_config
from queues.counts import summaries
from queues.durations import BUCKETS_S, recent_durations
from queues.errors import BullpenError
from queues.keys import QueueRef
from queues.recent import finished_since
from queues.workers import list_workers


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _family(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]
) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        rendered = ",".join(f'{key}="{_label(val)}"' for key, val in labels.items())
        lines.append(f"{name}{{{rendered}}} {value}" if rendered else f"{name} {value}")
    return lines


def _token_ok(request: HttpRequest) -> bool:
    expected = str(get_config().get("METRICS_TOKEN") or "")
    header = request.headers.get("Authorization", "")
    given = header[7:] if header.startswith("Bearer ") else request.GET.get("token", "")
    return bool(expected) and hmac.compare_digest(expected.encode(), given.encode())


def _histograms(durations: dict[QueueRef, list[float]]) -> list[str]:
    name = "bullpen_job_duration_seconds"
    lines = [
        f"# HELP {name} Run time of the newest completed jobs still kept (a sample per queue).",
        f"# TYPE {name} histogram",
    ]
    for ref, values in durations.items():
        labels = f'queue="{_label(ref.slug)}",prefix="{_label(ref.prefix)}"'
        for bound in BUCKETS_S:
            count = sum(1 for value in values if value <= bound)
            lines.append(f'{name}_bucket{{{labels},le="{bound}"}} {count}')
        lines.append(f'{name}_bucket{{{labels},le="+Inf"}} {len(values)}')
        lines.append(f"{name}_sum{{{labels}}} {round(sum(values), 6)}")
        lines.append(f"{name}_count{{{labels}}} {len(values)}")
    return lines


async def metrics(request: HttpRequest) -> HttpResponse:
    if not get_config().get("METRICS_TOKEN"):
        return HttpResponse(
            "Metrics are off: set BULLPEN['METRICS_TOKEN']\n", status=404, content_type="text/plain"
        )
    if not _token_ok(request):
        response = HttpResponse("Bad or missing token\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="Bullpen metrics"'
        return response
    started = time.perf_counter()
    lines: list[str] = []
    redis_up = 1
    try:
        found = await summaries()
        refs = [s.ref for s in found]
        recent = await finished_since(refs, 3600)
        workers = await list_workers(refs)
        sample = int(get_config().get("METRICS_DURATION_SAMPLE", 100))
        durations = await recent_durations(refs, sample)
    except BullpenError:
        redis_up, found, recent, workers, durations = 0, [], {}, [], {}

    def who(slug: str, prefix: str) -> dict[str, str]:
        return {"queue": slug, "prefix": prefix}

    lines += _family(
        "bullpen_queue_jobs",
        "gauge",
        "Jobs in each state.",
        (
            ({**who(s.ref.slug, s.ref.prefix), "state": state}, count)
            for s in found
            for state, count in s.counts.items()
        ),
    )
    lines += _family(
        "bullpen_queue_paused",
        "gauge",
        "1 when the queue is paused.",
        ((who(s.ref.slug, s.ref.prefix), int(s.paused)) for s in found),
    )
    lines += _family(
        "bullpen_queue_finished_last_hour",
        "gauge",
        "Jobs completed or failed in the last hour (as far as the queue keeps them).",
        (
            ({**who(s.ref.slug, s.ref.prefix), "outcome": outcome}, recent[s.ref][outcome])
            for s in found
            for outcome in ("completed", "failed")
        ),
    )
    alert_samples = []
    for s in found:
        firing = {a.rule for a in evaluate(s, recent[s.ref]["failed"])}
        for rule in ALERT_RULES:
            alert_samples.append(
                ({**who(s.ref.slug, s.ref.prefix), "rule": rule}, int(rule in firing))
            )
    lines += _family(
        "bullpen_alert", "gauge", "1 while an alert threshold is breached.", alert_samples
    )
    per_queue: dict[tuple[str, str], int] = {}
    for worker in workers:
        per_queue[(worker.queue, worker.library)] = (
            per_queue.get((worker.queue, worker.library), 0) + 1
        )
    lines += _family(
        "bullpen_workers",
        "gauge",
        "Worker connections per queue and library.",
        (
            ({"queue": queue, "library": library}, count)
            for (queue, library), count in per_queue.items()
        ),
    )
    lines += _histograms(durations)
    lines += _family(
        "bullpen_redis_up", "gauge", "1 when Redis answered this scrape.", [({}, redis_up)]
    )
    lines += _family(
        "bullpen_scrape_duration_seconds",
        "gauge",
        "Time taken by this scrape.",
        [({}, round(time.perf_counter() - started, 6))],
    )
    return HttpResponse("\n".join(lines) + "\n", content_type="text/plain; version=0.0.4")
