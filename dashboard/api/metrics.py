"""Prometheus ``/metrics``: queue depth per state, recent completions and failures, alerts,
workers, and Bullpen's own health. Protected by ``METRICS_TOKEN`` (compared in constant time).

The families come from :mod:`dashboard.api.metrics_collector`, rendered by ``prometheus_client`` on
a registry made for the scrape (never the process-wide default registry, which would mix in
whatever else the host site registers there)."""

from __future__ import annotations

import hmac
import time

from django.http import HttpRequest, HttpResponse
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from dashboard.api.metrics_collector import Scrape, ScrapeCollector
from queues.alerts.thresholds import LAST_HOUR_S, alerts_by_queue, read_signatures
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.history.prom import read_histograms
from queues.history.read import oldest_waiting_ms
from queues.reads.counts import summaries
from queues.reads.workers import ClientListRefused, WorkerConnection, list_workers
from queues.redis import reachability
from queues.throughput.durations import recent_durations
from queues.throughput.recent import finished_since


def _token_ok(request: HttpRequest) -> bool:
    """The header's bearer token is the configured one. Only the header counts: a token in
    the URL would be written to every access log on the way."""
    expected = str(get_config().get("METRICS_TOKEN") or "")
    header = request.headers.get("Authorization", "")
    given = header[7:] if header.startswith("Bearer ") else ""
    return bool(expected) and hmac.compare_digest(expected.encode(), given.encode())


def _refused(message: str) -> HttpResponse:
    response = HttpResponse(message, status=401, content_type="text/plain")
    response["WWW-Authenticate"] = 'Bearer realm="Bullpen metrics"'
    return response


async def read_scrape() -> Scrape:
    """Everything one scrape reports, read from Redis (or Redis reported down)."""
    started = time.perf_counter()
    try:
        found = await summaries()
        refs = [s.ref for s in found]
        recent = await finished_since(refs, LAST_HOUR_S)
        try:
            workers: list[WorkerConnection] | None = await list_workers(refs)
        except ClientListRefused:
            workers = None  # a Redis user without CLIENT: the gauge is left out
        durations = await recent_durations(refs, int(get_config()["METRICS_DURATION_SAMPLE"]))
        signatures = await read_signatures(found, recent)
        per_name = bool(get_config()["METRICS_PER_JOB_NAME"])
        history = await read_histograms(refs, per_name)
        oldest = await oldest_waiting_ms(refs)
    except BullpenError:
        return Scrape(redis_up=False, started=started)
    return Scrape(
        redis_up=True,
        started=started,
        queues=found,
        finished_last_hour=recent,
        alerts=alerts_by_queue(found, recent, signatures),
        workers=workers,
        durations=durations,
        history=history,
        per_name=per_name,
        oldest_waiting=oldest,
        unreachable=frozenset(reachability.unreachable()),
    )


def exposition(scrape: Scrape) -> bytes:
    """The scrape in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ScrapeCollector(scrape))
    return generate_latest(registry)


async def metrics(request: HttpRequest) -> HttpResponse:
    if not get_config().get("METRICS_TOKEN"):
        return HttpResponse(
            "Metrics are off: set BULLPEN['METRICS_TOKEN']\n", status=404, content_type="text/plain"
        )
    if "token" in request.GET:
        return _refused(
            "The token is not accepted in the URL, where access logs keep it: send it in the "
            "'Authorization: Bearer <token>' header (and replace a token that was sent in a URL)\n"
        )
    if not _token_ok(request):
        return _refused("Bad or missing token: send 'Authorization: Bearer <token>'\n")
    response = HttpResponse(exposition(await read_scrape()), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"  # read with a token: for its scraper alone
    return response
