"""The API on a Postgres store shows what Node BullMQ's own reads of it show: counts, job lists
in getJobs' order, every job's fields, logs and flow relatives. A Redis connection beside it
keeps its queues and Bullpen's own state."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.test import AsyncClient

from tests.pages.test_read_interop import JOB_FIELDS, STATES
from tests.support.peer import Peer, PostgresPeer


async def api(client: AsyncClient, path: str, status: int = 200) -> Any:
    response = await client.get(f"/queues/api/{path}")
    assert response.status_code == status, response.content[:500]
    return response.json()


async def test_overview_counts_match_node_beside_a_redis_queue(
    client: AsyncClient, pg_peer: PostgresPeer, peer: Peer, scenario: dict[str, Any]
) -> None:
    peer("add", "--queue", "mail", "--name", "hello", "--data", "{}")
    body = await api(client, "queues/")
    by_slug = {q["slug"]: q for q in body["queues"]}
    assert set(by_slug) == {"mail@main", "shop@pg", "shop-children@pg", "shop-paused@pg"}
    assert by_slug["mail@main"]["counts"]["waiting"] == 1
    for name in ("shop", "shop-children", "shop-paused"):
        node = pg_peer("inspect", "--queue", name)
        ours = by_slug[f"{name}@pg"]
        assert ours["connection"] == "pg"
        for state, count in node["countsAll"].items():
            assert ours["counts"][state] == count, f"{name} {state}"
        assert ours["paused"] is node["isPaused"]
    assert by_slug["shop-paused@pg"]["counts"]["paused"] == 3


@pytest.mark.parametrize("order", ["desc", "asc"])
async def test_job_lists_match_node_get_jobs(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any], order: str
) -> None:
    node = pg_peer("inspect", "--queue", "shop", *(["--asc"] if order == "asc" else []))
    for state in STATES:
        if state == "paused":
            continue  # Node lists no paused jobs on Postgres; shown below for a paused queue
        path = f"queues/shop@pg/jobs/?state={state}&per_page=300&order={order}"
        page = await api(client, path)
        assert [job["id"] for job in page["jobs"]] == node["jobs"][state], state
        assert page["total"] == len(node["jobs"][state]), state
        assert all("stacktrace" not in job for job in page["jobs"])


async def test_a_paused_queue_lists_its_jobs_under_paused(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    node = pg_peer("inspect", "--queue", "shop-paused")
    page = await api(client, "queues/shop-paused@pg/jobs/?state=paused&per_page=10")
    assert sorted(job["id"] for job in page["jobs"]) == sorted(node["jobs"]["waiting"])
    assert page["total"] == node["countsAll"]["paused"] == 3


async def test_paging_walks_nodes_order(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add-bulk", "--queue", "paging", "--name", "job", "--count", "25")
    node = pg_peer("inspect", "--queue", "paging")["jobs"]["waiting"]
    seen: list[str] = []
    for number in (1, 2, 3):
        body = await api(client, f"queues/paging@pg/jobs/?state=waiting&page={number}&per_page=10")
        seen += [job["id"] for job in body["jobs"]]
        assert body["total"] == 25
    assert seen == node


async def test_every_job_detail_matches_node_get_job(
    client: AsyncClient, pg_peer: PostgresPeer, scenario: dict[str, Any]
) -> None:
    ids = scenario["ids"]
    every = [i for state in STATES if state != "paused" for i in ids[state]]
    node = pg_peer("inspect", "--queue", "shop", "--ids", ",".join(every))["details"]
    for job_id in every:
        ours = await api(client, f"queues/shop@pg/jobs/{job_id}/")
        for field in JOB_FIELDS:
            if field in ("parentKey", "queueQualifiedName"):
                continue  # compared below: Bullpen names queues with their prefix
            assert ours.get(field) == node[job_id].get(field), f"job {job_id} field {field}"
        assert ours["state"] == node[job_id]["state"]
        assert ours["logs"] == node[job_id]["logs"]
        assert ours["logsCount"] == node[job_id]["logsCount"]
    failed = await api(client, "queues/shop@pg/jobs/charge-9/")
    assert len(failed["stacktrace"]) == 3 and "card declined" in failed["stacktrace"][0]


async def test_a_flow_names_its_parent_and_children(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    parent = await api(client, "queues/shop@pg/jobs/bundle-1/")
    pending = parent["children"]["pending"]
    assert sorted(child["id"] for child in pending) == ["compile-css", "compile-js"]
    assert {child["slug"] for child in pending} == {"shop-children@pg"}
    child = await api(client, "queues/shop-children@pg/jobs/compile-css/")
    assert child["parentRef"] == {"slug": "shop@pg", "queue": "shop", "id": "bundle-1"}


async def test_unknown_queues_and_jobs_are_404(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    await api(client, "queues/nothing@pg/jobs/?state=waiting", status=404)
    await api(client, "queues/shop@pg/jobs/no-such-job/", status=404)


async def test_search_covers_the_redis_and_the_postgres_queues(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any]
) -> None:
    peer("add", "--queue", "mail", "--name", "welcome", "--data", '{"to": "ada"}')
    everywhere = await streamed(client, "/queues/api/search/?q=ada&state=waiting")
    assert '"mail@main"' in everywhere and '"shop@pg"' in everywhere  # ada@example.com
    one = await streamed(client, "/queues/api/queues/shop@pg/search/?q=card&state=failed")
    assert "charge-9" in one and "not available" not in one


async def streamed(client: AsyncClient, path: str) -> str:
    response = await client.get(path)
    assert response.status_code == 200
    chunks = [chunk async for chunk in response.streaming_content]  # type: ignore[attr-defined]
    return b"".join(chunks).decode()


async def test_a_node_worker_on_the_store_is_listed_while_it_runs(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("add", "--queue", "shop", "--name", "first", "--data", "{}")
    assert (await api(client, "queues/shop@pg/workers/"))["workers"] == []
    working = asyncio.get_running_loop().run_in_executor(
        None, lambda: pg_peer("work", "--queue", "shop", "--count", "2", "--timeout-ms", "30000")
    )
    listed: list[dict[str, Any]] = []
    for _ in range(200):  # until the worker's session has named itself (at most 10 s)
        listed = (await api(client, "queues/shop@pg/workers/"))["workers"]
        if listed:
            break
        await asyncio.sleep(0.05)
    assert [(w["queue"], w["library"]) for w in listed] == [("shop@pg", "node")]
    assert listed[0]["clientName"] == "shop"
    pg_peer("add", "--queue", "shop", "--name", "second", "--data", "{}")
    assert (await working)["completed"] == 2


async def test_job_schedulers_are_listed_as_node_reads_them(
    client: AsyncClient, pg_peer: PostgresPeer, with_pg: dict[str, Any]
) -> None:
    pg_peer("upsert-scheduler", "--queue", "shop", "--id", "hourly", "--pattern", "0 * * * *")
    made = pg_peer("upsert-scheduler", "--queue", "shop", "--id", "tick", "--every", "60000")
    node = {
        scheduler_id: pg_peer("scheduler", "--queue", "shop", "--id", scheduler_id)["scheduler"]
        for scheduler_id in ("hourly", "tick")
    }
    listed = (await api(client, "queues/shop@pg/schedulers/"))["schedulers"]
    by_id = {entry["id"]: entry for entry in listed}
    assert set(by_id) == {"hourly", "tick"}
    assert [entry["next"] for entry in listed] == sorted(entry["next"] for entry in listed)
    for scheduler_id, seen in node.items():
        assert by_id[scheduler_id]["next"] == seen["next"]
        assert by_id[scheduler_id]["name"] == seen["name"]
    assert by_id["hourly"]["pattern"] == "0 * * * *" and by_id["tick"]["every"] == 60000
    assert by_id["tick"]["template"]["data"] == {"scheduler": "tick"}
    assert made["nextJob"] is not None


async def test_a_flow_tree_reads_as_the_same_flow_on_redis_does(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any]
) -> None:
    peer("scenario", "--queue", "shop")  # the same flow, written by Node to Redis
    on_pg = await api(client, "queues/shop-children@pg/jobs/compile-js/flow/")
    on_redis = await api(client, "queues/shop-children@main/jobs/compile-js/flow/")
    as_text = json.dumps(on_pg).replace("@pg", "@store")
    assert json.loads(as_text) == json.loads(json.dumps(on_redis).replace("@main", "@store"))
    assert on_pg["levelsAboveJob"] == 1 and on_pg["root"]["id"] == "bundle-1"
    assert on_pg["root"]["childCounts"]["pending"] == 2
    assert [child["id"] for child in on_pg["root"]["children"]] == ["compile-css", "compile-js"]
