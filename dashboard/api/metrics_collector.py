"""What one ``/metrics`` scrape read, as Prometheus metric families (a ``prometheus_client``
collector). The reads are async and happen first; ``collect`` only turns them into families."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from queues.alerts.thresholds import COUNT_RULES as ALERT_RULES
from queues.alerts.thresholds import Alert
from queues.history.prom import Histograms
from queues.reads.counts import QueueSummary
from queues.reads.keys import QueueRef
from queues.reads.workers import WorkerConnection
from queues.redis import connections
from queues.throughput.durations import BUCKETS_S

QUEUE_LABELS = ["queue", "prefix"]


def queue_labels() -> list[str]:
    """A queue's labels; with several Redis connections its ``connection`` too (with one the
    series stay as they always were, so that existing queries and recording rules hold)."""
    return [*QUEUE_LABELS, "connection"] if connections.several() else QUEUE_LABELS


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
    # Recorded wait and run histograms (queues/history/prom.py), and the oldest waiting job's
    # age (ms; None: nothing waits).
    history: dict[QueueRef, Histograms] = field(default_factory=dict)
    per_name: bool = False
    oldest_waiting: dict[QueueRef, int | None] = field(default_factory=dict)
    # With several connections: those that did not answer (their queues are left out).
    unreachable: frozenset[str] = frozenset()


def _queue(ref: QueueRef) -> list[str]:
    if connections.several():
        return [ref.slug_on_connection, ref.prefix, ref.connection]
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
        yield from self._history()
        yield self._oldest_waiting()
        yield self._redis_up()
        yield GaugeMetricFamily(
            "bullpen_scrape_duration_seconds",
            "Time taken by this scrape.",
            value=round(time.perf_counter() - self.scrape.started, 6),
        )

    def _redis_up(self) -> Metric:
        if not connections.several():
            return GaugeMetricFamily(
                "bullpen_redis_up",
                "1 when Redis answered this scrape.",
                value=int(self.scrape.redis_up),
            )
        family = GaugeMetricFamily(
            "bullpen_redis_up", "1 when the connection's Redis answered this scrape.",
            labels=["connection"],
        )  # fmt: skip
        for name in connections.redis_names():
            up = self.scrape.redis_up and name not in self.scrape.unreachable
            family.add_metric([name], int(up))
        return family

    def _jobs(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_jobs", "Jobs in each state.", labels=[*queue_labels(), "state"]
        )
        for summary in self.scrape.queues:
            for state, count in summary.counts.items():
                family.add_metric([*_queue(summary.ref), state], count)
        return family

    def _paused(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_paused", "1 when the queue is paused.", labels=queue_labels()
        )
        for summary in self.scrape.queues:
            family.add_metric(_queue(summary.ref), int(summary.paused))
        return family

    def _finished(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_queue_finished_last_hour",
            "Jobs completed or failed in the last hour (as far as the queue keeps them).",
            labels=[*queue_labels(), "outcome"],
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
            labels=[*queue_labels(), "rule"],
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
            labels=["queue", "library", "connection"]
            if connections.several()
            else ["queue", "library"],
        )
        per_queue = Counter((worker.queue, worker.library) for worker in workers)
        for (queue, library), count in per_queue.items():
            if connections.several():
                connection, on_connection = connections.split_slug(queue)
                family.add_metric([on_connection, library, connection], count)
            else:
                family.add_metric([queue, library], count)
        return family

    def _durations(self) -> Metric:
        family = HistogramMetricFamily(
            "bullpen_job_duration_seconds",
            "Run time of the newest completed jobs still kept (a sample per queue).",
            labels=queue_labels(),
        )
        for ref, values in self.scrape.durations.items():
            buckets = [(str(bound), sum(1 for v in values if v <= bound)) for bound in BUCKETS_S]
            buckets.append(("+Inf", len(values)))
            family.add_metric(_queue(ref), buckets, round(sum(values), 6))
        return family

    def _history(self) -> Iterator[Metric]:
        per_name = self.scrape.per_name
        labels = [*queue_labels(), "name"] if per_name else queue_labels()
        for kind, what in (("wait", "Wait"), ("run", "Run")):
            family = HistogramMetricFamily(
                f"bullpen_job_{kind}_seconds",
                f"{what} time of finished jobs as recorded by the live reader (job history).",
                labels=labels,
            )
            for ref, found in self.scrape.history.items():
                for (series_kind, name), histogram in sorted(
                    found.items(), key=lambda item: (item[0][0], item[0][1] or "")
                ):
                    if series_kind != kind or (name is None) == per_name:
                        continue
                    family.add_metric(
                        [*_queue(ref), *([name] if name is not None else [])],
                        histogram.buckets,
                        histogram.sum,
                    )
            yield family

    def _oldest_waiting(self) -> Metric:
        family = GaugeMetricFamily(
            "bullpen_oldest_waiting_seconds",
            "How long the oldest waiting job has waited since it was due (0: none waits).",
            labels=queue_labels(),
        )
        for ref, age in self.scrape.oldest_waiting.items():
            family.add_metric(_queue(ref), 0 if age is None else age / 1000)
        return family
