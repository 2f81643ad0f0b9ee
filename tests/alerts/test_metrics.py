"""/metrics' families from one scrape's reads (pure logic: no Redis read here)."""

from __future__ import annotations

import time

import prometheus_client
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from dashboard.api.metrics import exposition
from dashboard.api.metrics_collector import Scrape
from queues.alerts.thresholds import Alert
from queues.reads.counts import QueueSummary
from queues.reads.keys import STATES, QueueRef
from queues.reads.workers import WorkerConnection

ODD = 'we"ird\\name\nx'  # every character the text format escapes in a label


def parsed(scrape: Scrape) -> dict[str, list[Sample]]:
    with override_settings(BULLPEN={"PREFIXES": ["bull", "eu"]}):
        text = exposition(scrape).decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def worker(queue: str, library: str) -> WorkerConnection:
    return WorkerConnection(queue, "w", library, "127.0.0.1:1", 1, 0, "bull:x")


def test_a_scrape_as_prometheus_families() -> None:
    mail, odd = QueueRef("bull", "mail"), QueueRef("eu", ODD)
    counts = {**dict.fromkeys(STATES, 0), "waiting": 7, "failed": 2}
    scrape = Scrape(
        redis_up=True,
        started=time.perf_counter(),
        queues=[
            QueueSummary(mail, counts, True, None, None, None),
            QueueSummary(odd, dict.fromkeys(STATES, 0), False, None, None, None),
        ],
        finished_last_hour={mail: {"completed": 5, "failed": 2}},
        alerts={mail: [Alert("waiting", 7, 1)], odd: []},
        workers=[worker("mail", "node"), worker("mail", "node"), worker("mail", "python")],
        durations={mail: [0.004, 0.3, 2.0]},
    )
    families = parsed(scrape)

    def values(name: str, *labels: str) -> dict[tuple[str, ...], float]:
        return {tuple(s.labels[k] for k in labels): s.value for s in families[name]}

    jobs = values("bullpen_queue_jobs", "queue", "prefix", "state")
    assert jobs[("mail", "bull", "waiting")] == 7 and jobs[("mail", "bull", "failed")] == 2
    assert jobs[(f"eu:{ODD}", "eu", "waiting")] == 0  # the odd name comes back whole
    assert len(jobs) == 2 * len(STATES)
    assert values("bullpen_queue_paused", "queue") == {("mail",): 1, (f"eu:{ODD}",): 0}
    finished = values("bullpen_queue_finished_last_hour", "queue", "outcome")
    assert finished[("mail", "completed")] == 5 and finished[(f"eu:{ODD}", "failed")] == 0
    firing = values("bullpen_alert", "queue", "rule")
    assert firing[("mail", "waiting")] == 1 and firing[("mail", "delayed")] == 0
    # Every rule of every queue, firing or not: four thresholds and new failure signatures.
    assert len(firing) == 2 * 5
    assert values("bullpen_workers", "queue", "library") == {
        ("mail", "node"): 2,
        ("mail", "python"): 1,
    }
    histogram = {
        (s.name, s.labels.get("le")): s.value
        for s in families["bullpen_job_duration_seconds"]
        if s.labels["queue"] == "mail"
    }
    assert histogram[("bullpen_job_duration_seconds_bucket", "0.005")] == 1
    assert histogram[("bullpen_job_duration_seconds_bucket", "0.5")] == 2
    assert histogram[("bullpen_job_duration_seconds_bucket", "+Inf")] == 3
    assert histogram[("bullpen_job_duration_seconds_count", None)] == 3
    assert histogram[("bullpen_job_duration_seconds_sum", None)] == 2.304
    assert families["bullpen_redis_up"][0].value == 1
    assert 0 <= families["bullpen_scrape_duration_seconds"][0].value < 5


def test_redis_down_is_said_and_nothing_else_invented() -> None:
    families = parsed(Scrape(redis_up=False, started=time.perf_counter()))
    assert families["bullpen_redis_up"][0].value == 0
    assert families["bullpen_queue_jobs"] == [] and families["bullpen_alert"] == []


def test_the_default_registry_is_left_alone() -> None:
    parsed(Scrape(redis_up=True, started=time.perf_counter()))
    names = {family.name for family in prometheus_client.REGISTRY.collect()}
    assert not any(name.startswith("bullpen_") for name in names)
