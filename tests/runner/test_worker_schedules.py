"""Repeatable jobs: schedulers registered idempotently on every start, listed for the
dashboard, and their jobs run by the runner iteration after iteration."""

from __future__ import annotations

import json
from typing import Any

import pytest

from queues.reads.keys import QueueRef
from queues.reads.schedulers import list_schedulers
from queues.runner import QueueOptions, Registry, RunnerConfigError, Schedule
from tests.support.worker_fixtures import Runners, wait_for

DIGEST = Schedule(
    id="weekly-digest",
    name="digest",
    cron="0 9 * * 1",
    tz="Europe/Paris",
    data={"template": "digest"},
)


def _registry(*schedules: Schedule) -> Registry:
    registry = Registry()

    async def send(payload: Any) -> str:
        return "sent"

    registry.register("mail", send, QueueOptions(attempts=2), schedules=schedules)
    return registry


async def test_registering_twice_gives_one_scheduler(runners: Runners, redis_client: Any) -> None:
    for _ in range(2):  # two starts of the worker, as after a deploy
        runner = await runners.start(_registry(DIGEST))
        await runners.stop(runner)
    assert redis_client.zrange("bull:mail:repeat", 0, -1) == ["weekly-digest"]
    delayed = redis_client.zrange("bull:mail:delayed", 0, -1)
    assert len(delayed) == 1
    assert delayed[0].startswith("repeat:weekly-digest:")

    listed = await list_schedulers(QueueRef("bull", "mail"))
    assert len(listed) == 1
    scheduler = listed[0]
    assert scheduler["id"] == "weekly-digest"
    assert scheduler["name"] == "digest"
    assert scheduler["pattern"] == "0 9 * * 1"
    assert scheduler["tz"] == "Europe/Paris"
    assert scheduler["every"] is None
    assert scheduler["template"]["data"] == {"template": "digest"}
    assert scheduler["template"]["opts"]["attempts"] == 2
    assert scheduler["legacy"] is False
    # The next run is a Monday at 09:00 in Paris.
    from datetime import datetime
    from zoneinfo import ZoneInfo

    when = datetime.fromtimestamp(scheduler["next"] / 1000, ZoneInfo("Europe/Paris"))
    assert (when.weekday(), when.hour, when.minute) == (0, 9, 0)
    json.dumps(listed)  # JSON-ready


async def test_every_n_schedules_keep_producing_jobs(runners: Runners, redis_client: Any) -> None:
    await runners.start(_registry(Schedule(id="tick", name="tick", every_ms=150)))

    async def three_ticks() -> bool:
        return int(redis_client.zcard("bull:mail:completed")) >= 3

    await wait_for("three iterations of the scheduler", three_ticks)
    listed = await list_schedulers(QueueRef("bull", "mail"))
    assert [(s["id"], s["every"]) for s in listed] == [("tick", 150)]
    assert listed[0]["iterationCount"] >= 3


async def test_unknown_queue_lists_nothing() -> None:
    assert await list_schedulers(QueueRef("bull", "nothing-here")) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cron": "0 9 * * 1"}, "no tz"),
        ({"cron": "0 9 * * 1", "tz": "Mars/Olympus"}, "unknown tz"),
        ({"cron": "sixty minutes", "tz": "UTC"}, "invalid cron"),
        ({}, "exactly one of cron, every_ms"),
        ({"cron": "0 9 * * 1", "tz": "UTC", "every_ms": 5}, "exactly one"),
        ({"every_ms": 0}, "positive"),
    ],
)
def test_schedules_are_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(RunnerConfigError, match=message):
        Schedule(id="s", name="s", **kwargs)


def test_schedule_ids_cannot_hold_colons() -> None:
    with pytest.raises(RunnerConfigError, match="without ':'"):
        Schedule(id="a:b", name="s", every_ms=10)
