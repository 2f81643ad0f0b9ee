"""Hundreds and thousands of queues: ``api/queues/``'s filter, groups, order and pages, a group
action, what a page view costs Redis, and the live reader's budget for quiet queues."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from queues.cancelling import cancel_and_wait
from queues.live.follower import Follower
from queues.live.interest import Interest
from queues.live.settings import LiveSettings
from tests.support.live_reads import TRIES, publish_nowhere, until
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
API = "/queues/api/queues/"


def seed(peer: Peer, tenants: int) -> None:
    """``tenants`` times (mail, billing): tenant i's queues hold i % 4 waiting jobs, every 25th
    tenant's mail queue one failed job, every 50th tenant's queues are paused."""
    peer("many-queues", "--count", str(tenants), "--services", "mail,billing", timeout=180)


def calls(redis_client: Any) -> dict[str, int]:
    stats = redis_client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(entry["calls"]) for name, entry in stats.items()}


def grown(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}


async def test_the_api_filters_groups_sorts_and_pages_500_queues(
    peer: Peer, client: AsyncClient
) -> None:
    seed(peer, 250)
    everything = (await client.get(API)).json()
    assert everything["total"] == 500 and everything["pages"] == 5
    assert len(everything["queues"]) == 100 and everything["queues"][0]["name"] == "t001-billing"
    assert everything["totals"]["failed"] == 10 and "paused" not in everything["totals"]

    filtered = (await client.get(API, {"q": "T01", "per_page": 50})).json()
    names = [q["name"] for q in filtered["queues"]]
    assert filtered["matching"] == 20  # t010 to t019, both queues of each
    assert names[:3] == ["t010-billing", "t010-mail", "t011-billing"]
    assert all("t01" in name for name in names)

    worst = (await client.get(API, {"sort": "-failed", "per_page": 10})).json()
    assert [q["counts"]["failed"] for q in worst["queues"]] == [1] * 10
    assert worst["queues"][0]["name"] == "t025-mail"

    problems = (await client.get(API, {"problems": 1, "per_page": 500})).json()
    reasons = {q["name"]: q["attention"] for q in problems["queues"]}
    assert "failed jobs" in reasons["t025-mail"]
    assert "paused" in reasons["t050-billing"]
    # Nobody works these queues: the ones with waiting jobs are problems too.
    assert "jobs wait and no worker is connected" in reasons["t001-mail"]
    assert "t004-mail" not in reasons  # 4 % 4 = 0 jobs, no worker needed

    grouped = (await client.get(API, {"group": "head", "per_page": 20, "page": 2})).json()
    assert "groups" in grouped and grouped["queues"] == []
    assert [g["key"] for g in grouped["groups"]][:2] == ["t021", "t022"]
    t025 = next(g for g in grouped["groups"] if g["key"] == "t025")
    assert t025["queues"] == 2 and t025["counts"]["failed"] == 1 and t025["problems"] == 2
    tails = (await client.get(API, {"group": "tail"})).json()
    assert [(g["key"], g["queues"]) for g in tails["groups"]] == [("billing", 250), ("mail", 250)]

    one = (await client.get(API, {"group": "head", "within": "t050"})).json()
    assert [q["name"] for q in one["queues"]] == ["t050-billing", "t050-mail"]
    assert all(q["paused"] for q in one["queues"])

    past_the_end = (await client.get(API, {"page": 99})).json()
    assert past_the_end["page"] == 5 and past_the_end["queues"][-1]["name"] == "t250-mail"

    refused = await client.get(API, {"sort": "colour"})
    assert refused.status_code == 400
    assert "sort must be name or a state" in refused.json()["error"]


async def test_a_page_view_costs_redis_at_most_10_commands_per_queue(
    peer: Peer, client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    seed(peer, 250)
    # As deployed: the queue list is scanned once and kept for 30 s, not scanned every view.
    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 30}):
        await client.get("/queues/")
        before = calls(redis_client)
        page = await client.get("/queues/")
        cost = grown(before, calls(redis_client))
    spent = sum(cost.values()) - 1  # less the INFO that read "before"
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count("<tr data-queue=") == 100
    assert len(page.content) < 300_000
    print(f"one view of 500 queues: {spent} Redis commands ({spent / 500:.1f} a queue): {cost}")
    assert spent / 500 <= 10, cost


async def test_a_group_action_pauses_every_queue_of_the_group_and_is_audited(
    peer: Peer, client: AsyncClient, redis_client: Any
) -> None:
    seed(peer, 30)
    answer = await client.post(
        "/queues/api/groups/pause/", {"group": "head", "key": "t007"}, headers=AUTH
    )
    assert answer.status_code == 200, answer.content
    assert sorted(answer.json()["queues"]) == ["t007-billing", "t007-mail"]
    assert redis_client.hget("bull:t007-mail:meta", "paused") == "1"
    assert redis_client.hget("bull:t007-billing:meta", "paused") == "1"
    assert redis_client.hget("bull:t008-mail:meta", "paused") is None

    retried = await client.post(
        "/queues/api/groups/retry/", {"group": "tail", "key": "mail"}, headers=AUTH
    )
    assert retried.status_code == 200, retried.content
    assert retried.json()["queues"] == ["t025-mail"]

    unknown = await client.post(
        "/queues/api/groups/resume/", {"group": "head", "key": "t999"}, headers=AUTH
    )
    assert unknown.status_code == 404
    signed_out = await client.post("/queues/api/groups/pause/", {"group": "head", "key": "t001"})
    assert signed_out.status_code == 401
    assert redis_client.hget("bull:t001-mail:meta", "paused") is None

    audit = (await client.get("/queues/audit/", headers=AUTH)).content.decode()
    assert "group-pause" in audit and "group-retry" in audit


async def test_quiet_queues_are_re_read_from_a_fixed_budget_not_all_at_once(
    peer: Peer, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    seed(peer, 1000)  # 2,000 queues, none with events after this
    registry = Interest()
    registry.watch_overview()
    # Every queue is due a re-read one second after it was read: only the budget holds it.
    settings = LiveSettings(lease_ttl_ms=2000, full_refresh=1.0, quiet_reads_per_second=5.0)
    # Without history: the seed's failed jobs are written to it when their minute closes,
    # which may fall in the window measured here (a one-off, not the steady cost).
    with override_settings(BULLPEN={**bullpen_settings, "HISTORY_RECORDING": False}):
        follower = Follower(publish_nowhere, registry, settings)
    running = asyncio.ensure_future(follower.run())
    try:
        for _ in range(300):
            if len(follower.counts.read_at) >= 2000:
                break
            await asyncio.sleep(0.1)
        assert len(follower.counts.read_at) == 2000  # the first look reads every queue once
        window, era = 10, ""
        # A window in which the reader started over (its lease lapsed or Redis did not answer
        # in time, on a loaded machine: a new era of its counts) read every queue again:
        # measured again.
        for _ in range(TRIES):
            await until("every queue's counts sent", lambda: len(follower.counts.last_sent) >= 2000)
            await asyncio.sleep(2)
            era = follower.counts.era
            before = calls(redis_client)
            await asyncio.sleep(window)
            cost = grown(before, calls(redis_client))
            if follower.counts.era == era:
                break
        assert follower.counts.era == era, f"the reader started over in each of {TRIES} windows"
    finally:
        await cancel_and_wait(running)
    # A queue's exact read is 5 ZCARDs (prioritized, delayed, waiting-children, completed,
    # failed), 2 LLENs and an HMGET of its meta.
    reads = cost.get("zcard", 0) / 5
    total = sum(cost.values())
    print(
        f"2,000 idle queues, {window} s: {reads:.0f} queue re-reads, {total} Redis commands "
        f"({total * 60 / window:.0f} a minute): {cost}"
    )
    assert reads <= 5 * (window + 2)  # the budget, and two seconds saved up
    assert reads >= 5 * window / 2  # and it is spent: quiet queues are re-read
    # 50 re-reads of 11 commands (the read, MULTI/EXEC, the stream's last id) and the reader's
    # own (discovery's SCANs, the lease): about 4,800 a minute; the two seconds saved up add
    # up to 10 re-reads to a window.
    assert total * 60 / window <= 5500


async def test_rows_an_overview_shows_are_re_read_before_the_others(peer: Peer) -> None:
    seed(peer, 25)  # 50 queues
    registry = Interest()
    registry.watch_overview()
    registry.show(["t020-mail", "t021-billing"])
    settings = LiveSettings(lease_ttl_ms=2000, full_refresh=1.0, quiet_reads_per_second=1.0)
    follower = Follower(publish_nowhere, registry, settings)
    running = asyncio.ensure_future(follower.run())
    try:
        for _ in range(200):
            if len(follower.counts.read_at) >= 50:
                break
            await asyncio.sleep(0.1)
        started = max(follower.counts.read_at.values())
        await asyncio.sleep(6)
        read_at = {ref.slug: at for ref, at in follower.counts.read_at.items()}
    finally:
        await cancel_and_wait(running)
    again = sorted(slug for slug, at in read_at.items() if at > started)
    # One queue a second, and every queue is due: the shown rows take the budget.
    assert {"t020-mail", "t021-billing"} <= set(again), again
    assert len(again) <= 8, again
