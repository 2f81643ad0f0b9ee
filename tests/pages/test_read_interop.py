"""The API shows exactly what Node BullMQ's getJobCounts, getJobs and getJob see."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient

from tests.support.peer import Peer

STATES = [
    "waiting",
    "active",
    "prioritized",
    "delayed",
    "waiting-children",
    "paused",
    "completed",
    "failed",
]
# Fields of Node's Job that Bullpen reports; Node leaves unset ones out of toJSON().
JOB_FIELDS = [
    "id",
    "name",
    "data",
    "opts",
    "progress",
    "returnvalue",
    "stacktrace",
    "delay",
    "priority",
    "attemptsStarted",
    "attemptsMade",
    "stalledCounter",
    "timestamp",
    "processedOn",
    "finishedOn",
    "failedReason",
    "parentKey",
    "parent",
    "repeatJobKey",
    "deduplicationId",
    "processedBy",
    "queueQualifiedName",
]


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    return peer("scenario", "--queue", "shop")


async def api(client: AsyncClient, path: str) -> Any:
    response = await client.get(f"/queues/api/{path}")
    assert response.status_code == 200, response.content[:500]
    return response.json()


def assert_same_job(ours: dict[str, Any], node: dict[str, Any], *, row: bool = False) -> None:
    for field in JOB_FIELDS:
        if row and field == "stacktrace":
            assert field not in ours  # rows leave stack traces to the job detail
            continue
        assert ours.get(field) == node.get(field), f"job {node['id']} field {field}"
    assert ours["state"] == node["state"]


async def test_counts_match_node(client: AsyncClient, peer: Peer, scenario: dict[str, Any]) -> None:
    body = await api(client, "queues/")
    by_name = {q["name"]: q for q in body["queues"]}
    assert set(by_name) == {"shop", "shop-children", "shop-paused"}
    for name in by_name:
        node = peer("inspect", "--queue", name)
        ours = by_name[name]["counts"]
        for state, count in node["countsAll"].items():
            assert ours[state] == count, f"{name} {state}"
        assert set(node["counts"]) <= set(ours)
        assert by_name[name]["paused"] is node["isPaused"]
    assert by_name["shop-paused"]["paused"] is True
    assert by_name["shop"]["counts"] == {
        "waiting": 4,
        "active": 1,
        "prioritized": 3,
        "delayed": 2,
        "waiting-children": 1,
        "paused": 0,
        "completed": 2,
        "failed": 2,
    }


@pytest.mark.parametrize("order", ["desc", "asc"])
async def test_job_lists_match_node_get_jobs(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any], order: str
) -> None:
    args = ["--queue", "shop"] + (["--asc"] if order == "asc" else [])
    node = peer("inspect", *args)
    for state in STATES:
        page = await api(client, f"queues/shop/jobs/?state={state}&per_page=300&order={order}")
        assert [job["id"] for job in page["jobs"]] == node["jobs"][state], state
        assert page["total"] == len(node["jobs"][state])


async def test_paging_walks_the_same_order(client: AsyncClient, peer: Peer) -> None:
    for i in range(25):
        peer("add", "--queue", "paging", "--name", f"job-{i}", "--data", f'{{"i": {i}}}')
    node = peer("inspect", "--queue", "paging")["jobs"]["waiting"]
    seen: list[str] = []
    for page in (1, 2, 3):
        body = await api(client, f"queues/paging/jobs/?state=waiting&page={page}&per_page=10")
        seen += [job["id"] for job in body["jobs"]]
        assert body["total"] == 25
    assert seen == node
    empty = await api(client, "queues/paging/jobs/?state=waiting&page=4&per_page=10")
    assert empty["jobs"] == []


async def test_every_job_detail_matches_node_get_job(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any]
) -> None:
    ids = scenario["ids"]
    every = [
        i
        for s in (
            "waiting",
            "active",
            "prioritized",
            "delayed",
            "waiting-children",
            "completed",
            "failed",
        )
        for i in ids[s]
    ]
    node = peer("inspect", "--queue", "shop", "--ids", ",".join(every))["details"]
    for job_id in every:
        ours = await api(client, f"queues/shop/jobs/{job_id}/")
        assert_same_job(ours, node[job_id])
        assert ours["logs"] == node[job_id]["logs"]
        assert ours["logsCount"] == node[job_id]["logsCount"]
        assert ours["invalid"] == []


async def test_list_rows_carry_the_same_fields(
    client: AsyncClient, peer: Peer, scenario: dict[str, Any]
) -> None:
    for state in ("failed", "completed", "active", "prioritized"):
        page = await api(client, f"queues/shop/jobs/?state={state}&per_page=300")
        ids = [job["id"] for job in page["jobs"]]
        node = peer("inspect", "--queue", "shop", "--ids", ",".join(ids))["details"]
        for row in page["jobs"]:
            assert_same_job(row, node[row["id"]], row=True)


async def test_failed_job_has_every_attempt(client: AsyncClient, scenario: dict[str, Any]) -> None:
    failed_id = scenario["ids"]["failed"][0]
    job = await api(client, f"queues/shop/jobs/{failed_id}/")
    assert job["attemptsMade"] == 3
    assert len(job["stacktrace"]) == 3
    assert all(frame.startswith("Error: card declined") for frame in job["stacktrace"])
    assert job["failedReason"].startswith("card declined")


async def test_completed_job_return_value_progress_and_logs(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    job = await api(client, f"queues/shop/jobs/{scenario['ids']['completed'][0]}/")
    assert isinstance(job["returnvalue"], dict) and job["returnvalue"]
    assert job["progress"] == {"pct": 100, "stage": "done"}
    assert job["logsCount"] == 3


async def test_flow_parent_and_children(client: AsyncClient, scenario: dict[str, Any]) -> None:
    flow = scenario["ids"]["flow"]
    parent = await api(client, f"queues/shop/jobs/{flow['parent']['id']}/")
    assert parent["state"] == "waiting-children"
    pending = {(c["queue"], c["id"]) for c in parent["children"]["pending"]}
    assert pending == {(c["queue"], c["id"]) for c in flow["children"]}
    child = flow["children"][0]
    child_job = await api(client, f"queues/{child['queue']}/jobs/{child['id']}/")
    assert child_job["parentRef"] == {"slug": "shop", "queue": "shop", "id": flow["parent"]["id"]}


async def test_deduplicated_job_is_one_job(client: AsyncClient, scenario: dict[str, Any]) -> None:
    dedup = scenario["ids"]["deduplication"]
    job = await api(client, f"queues/shop/jobs/{dedup['jobId']}/")
    assert job["deduplicationId"] == dedup["id"]
    assert job["opts"]["deduplication"] == {"id": dedup["id"]}
    waiting = await api(client, "queues/shop/jobs/?state=waiting&per_page=300")
    assert [j["id"] for j in waiting["jobs"]].count(dedup["jobId"]) == 1


async def test_paused_queue_jobs_are_waiting(client: AsyncClient, scenario: dict[str, Any]) -> None:
    paused = scenario["ids"]["paused-queue"]
    page = await api(client, f"queues/{paused}/jobs/?state=waiting&per_page=300")
    assert sorted(j["id"] for j in page["jobs"]) == sorted(scenario["ids"]["paused-queue-jobs"])
