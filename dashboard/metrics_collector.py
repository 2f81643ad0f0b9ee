"""What one ``/metrics`` scrape read, as Prometheus metric families (a ``prometheus_client``
collector). The reads are async and happen first; ``collect`` only turns them into families."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from queues.alerts import DEFAULTS as ALERT_RULES
from queues.alerts import Alert
from queues.counts import QueueSummary
from queues.durations import BUCKETS_S
from queues.keys import QueueRef
from queues.workers import WorkerConnection

QUEUE_LABELS = ["queue", "prefix"]


@dataclass(frozen=True)
class Scrape:
    """One scrape's reads; empty, with ``redis_up`` False, when Redis did not answer."""

    redis_up: bool
    # perf_counter() when the scrape began: its own duration is a metric.
    started: float
    queues: list[QueueSummary] = field(default_factory=list)
    finished_last_hour: dict[QueueRef, dict[str, int]] = field(default_factory=dict)
    alerts: dict[QueueRef, list[Alert]] = field(default_factory=dict)
    # None when Redis refuses CLIENT LIST to this user: no workers gauge then.
    workers: list[WorkerConnection] | None = field(default_factory=list)
    durations: dict[QueueRef, list[float]] = field(default_factory=dict)


def _queue(ref: QueueRef) -> list[str]:
    return [ref.slug, ref.prefix]


class ScrapeCollector(Collector):
    """Bullpen's metric families for one scrape, registered on a registry of its own."""

    def __init__(self, scrape: Scrape) -> None:
        self.scrape = scrape

    def collect(self) -> Iterator[Metric]:
        yield self._jobs()
        yield self._paused()
        yield self._finished()
        yield self._alerts()
        if self.scrape.workers is not None:
            yield self._workers(self.scrape.workers)
        yield self._durations()
        yield GaugeMetricFamily(
            "bullpen_redis_up",
            "1 when Redis answered this scrape.",
            value=int(self.scrape.redis_up),
        )
        yield GaugeMetricFamily(
            "bullpen_scrape_duration_seconds",
            "Time taken by this scrape.",
            value=round(time.perf_counter() - self.scrape.started, 6),
        )

    def _jobs(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_jobs", "Jobs in each state.", labels=[*QUEUE_LABELS, "state"]
        )
        for summary in self.scrape.queues:
            for state, count in summary.counts.items():
                family.add_metric([*_queue(summary.ref), state], count)
        return family

    def _paused(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_paused", "1 when the queue is paused.", labels=QUEUE_LABELS
        )
        for summary in self.scrape.queues:
            family.add_metric(_queue(summary.ref), int(summary.paused))
        return family

    def _finished(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_finished_last_hour",
            "Jobs completed or failed in the last hour (as far as the queue keeps them).",
            labels=[*QUEUE_LABELS, "outcome"],
        )
        for summary in self.scrape.queues:
            finished = self.scrape.finished_last_hour.get(summary.ref, {})
            for outcome in ("completed", "failed"):
                family.add_metric([*_queue(summary.ref), outcome], finished.get(outcome, 0))
        return family

    def _alerts(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_alert",
            "1 while an alert threshold is breached.",
            labels=[*QUEUE_LABELS, "rule"],
        )
        for summary in self.scrape.queues:
            firing = {alert.rule for alert in self.scrape.alerts.get(summary.ref, [])}
            for rule in ALERT_RULES:
                family.add_metric([*_queue(summary.ref), rule], int(rule in firing))
        return family

    def _workers(self, workers: list[WorkerConnection]) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_workers",
            "Worker connections per queue and library.",
            labels=["queue", "library"],
        )
        per_queue = Counter((worker.queue, worker.library) for worker in workers)
        for (queue, library), count in per_queue.items():
            family.add_metric([queue, library], count)
        return family

    def _durations(self) -> Metric:
        family = HistogramMetricFamily(
            "bullpen_job_duration_seconds",
            "Run time of the newest completed jobs still kept (a sample per queue).",
            labels=QUEUE_LABELS,
        )
        for ref, values in self.scrape.durations.items():
            buckets = [(str(bound), sum(1 for v in values if v <= bound)) for bound in BUCKETS_S]
            buckets.append(("+Inf", len(values)))
            family.add_metric(_queue(ref), buckets, round(sum(values), 6))
        return family
