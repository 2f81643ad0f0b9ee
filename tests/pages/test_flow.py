"""A job's flow from its root, on a three-level flow across three queues made by Node's
FlowProducer: the same tree from any of its jobs, bounded in depth and width, states as Node
sees them."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.support.action_requests import AUTH, node
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)


def walk(tree: dict[str, Any]) -> list[dict[str, Any]]:
    return [tree, *(n for child in tree["children"] for n in walk(child))]


async def test_the_flow_from_any_of_its_jobs(client: AsyncClient, peer: Peer) -> None:
    ids = await node(peer, "flow", "--queue", "trip", "--children", "3", "--grandchildren", "2")
    leaf = ids["leaf"][1][0]
    for queue, job_id in [("trip", ids["root"]), ("trip-mid", ids["mid"][1]), ("trip-leaf", leaf)]:
        response = await client.get(f"/queues/api/queues/{queue}/jobs/{job_id}/flow/")
        assert response.status_code == 200, response.content
        flow = response.json()
        assert flow["job"] == {"queue": queue, "id": job_id}
        root = flow["root"]
        assert (root["queue"], root["id"], root["name"]) == ("trip", ids["root"], "root")
        assert root["state"] == "waiting-children"
        assert root["childCounts"] == {"failed": 0, "ignored": 0, "pending": 3, "processed": 0}
        assert sorted(c["id"] for c in root["children"]) == sorted(ids["mid"])
        assert {c["queue"] for c in root["children"]} == {"trip-mid"}
        nodes = walk(root)
        assert len(nodes) == 1 + 3 + 6
        leaves = [n for n in nodes if n["queue"] == "trip-leaf"]
        assert sorted(n["id"] for n in leaves) == sorted(i for row in ids["leaf"] for i in row)
        assert {n["state"] for n in leaves} == {"waiting"}
        assert all(n["via"] == "pending" and n["more"] == 0 for n in leaves)
    assert flow["levelsAboveJob"] == 2

    # Node's worker finishes every leaf: their parents move on to waiting, as Node sees them.
    await node(peer, "work", "--queue", "trip-leaf", "--count", "6")
    flow = (await client.get(f"/queues/api/queues/trip/jobs/{ids['root']}/flow/")).json()
    nodes = walk(flow["root"])
    leaves = [n for n in nodes if n["queue"] == "trip-leaf"]
    assert {(n["state"], n["via"]) for n in leaves} == {("completed", "processed")}
    mids = [n for n in nodes if n["queue"] == "trip-mid"]
    assert {n["state"] for n in mids} == {"waiting"}
    assert all(n["childCounts"]["processed"] == 2 for n in mids)
    status = await node(peer, "job-status", "--queue", "trip-mid", "--id", ids["mid"][0])
    assert status["state"] == "waiting"
    # Then its workers fail the middle jobs: state, reason and attempts in each node.
    await node(peer, "work", "--queue", "trip-mid", "--count", "3", "--fail")
    flow = (await client.get(f"/queues/api/queues/trip/jobs/{ids['root']}/flow/")).json()
    mids = [n for n in walk(flow["root"]) if n["queue"] == "trip-mid"]
    assert {n["state"] for n in mids} == {"failed"}
    assert all(n["failedReason"] and n["attemptsMade"] >= 1 for n in mids)
    status = await node(peer, "job-status", "--queue", "trip-mid", "--id", ids["mid"][0])
    assert status["state"] == "failed"


async def test_depth_and_width_are_bounded(client: AsyncClient, peer: Peer) -> None:
    ids = await node(peer, "flow", "--queue", "wide", "--children", "4", "--grandchildren", "3")
    url = f"/queues/api/queues/wide/jobs/{ids['root']}/flow/"
    flow = (await client.get(url, {"max_children": "2"})).json()
    root = flow["root"]
    assert len(root["children"]) == 2 and root["more"] == 2
    assert all(len(c["children"]) == 2 and c["more"] == 1 for c in root["children"])
    flow = (await client.get(url, {"depth": "1"})).json()
    mids = flow["root"]["children"]
    assert len(mids) == 4
    assert all(c["children"] == [] and c["more"] == 3 and c["cutAtDepth"] for c in mids)
    shallow = (await client.get(url, {"depth": "0"})).json()["root"]
    assert shallow["children"] == [] and shallow["more"] == 4
    for given, message in [
        ({"depth": "51"}, "depth must be"),
        ({"max_children": "0"}, "max_children must be"),
        ({"depth": "deep"}, "depth must be a whole number"),
    ]:
        refused = await client.get(url, given)
        assert refused.status_code == 400 and message in refused.json()["error"], given
    missing = await client.get("/queues/api/queues/wide/jobs/nope/flow/")
    assert missing.status_code == 404
    assert (await client.post(url, headers=AUTH)).status_code == 405


async def test_the_job_page_loads_the_tree(client: AsyncClient, peer: Peer) -> None:
    ids = await node(peer, "flow", "--queue", "trip", "--children", "2", "--grandchildren", "1")
    page = (await client.get(f"/queues/q/trip-mid/jobs/{ids['mid'][0]}/")).content.decode()
    assert f"/queues/q/trip-mid/jobs/{ids['mid'][0]}/flow/" in page
    tree = (await client.get(f"/queues/q/trip-mid/jobs/{ids['mid'][0]}/flow/")).content.decode()
    assert tree.count('data-testid="flow-node"') == 1 + 2 + 2
    assert 'class="this-job"' in tree and 'class="badge state-waiting-children"' in tree
    assert f'href="/queues/q/trip-leaf/jobs/{ids["leaf"][1][0]}/"' in tree


async def test_the_flow_across_prefixes(
    client: AsyncClient, peer: Peer, bullpen_settings: dict[str, Any]
) -> None:
    ids = await node(
        peer,
        "flow",
        "--queue",
        "trip",
        "--children",
        "1",
        "--grandchildren",
        "1",
        "--mid-prefix",
        "eu",
    )
    leaf = ids["leaf"][0][0]
    with override_settings(BULLPEN={**bullpen_settings, "PREFIXES": ["bull", "eu"]}):
        flow = (await client.get(f"/queues/api/queues/trip-leaf/jobs/{leaf}/flow/")).json()
        tree = (await client.get(f"/queues/q/trip-leaf/jobs/{leaf}/flow/")).content.decode()
    root = flow["root"]
    assert (root["queue"], root["id"], flow["levelsAboveJob"]) == ("trip", ids["root"], 2)
    (mid,) = root["children"]
    assert (mid["queue"], mid["queueName"], mid["id"]) == ("eu:trip-mid", "trip-mid", ids["mid"][0])
    assert [(n["queue"], n["id"]) for n in mid["children"]] == [("trip-leaf", leaf)]
    assert f'href="/queues/q/eu:trip-mid/jobs/{ids["mid"][0]}/"' in tree
    # A prefix this site does not read ends the walk where it can no longer follow.
    alone = (await client.get(f"/queues/api/queues/trip-leaf/jobs/{leaf}/flow/")).json()
    assert (alone["root"]["id"], alone["levelsAboveJob"]) == (leaf, 0)


async def test_a_flow_some_writer_broke_still_answers(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    await node(peer, "add", "--queue", "odd", "--name", "seed")
    # Two jobs each naming the other as parent and child: a loop BullMQ never writes.
    redis_client.hset("bull:odd:a", mapping={"name": "a", "parentKey": "bull:odd:b"})
    redis_client.hset("bull:odd:b", mapping={"name": "b", "parentKey": "bull:odd:a"})
    redis_client.sadd("bull:odd:a:dependencies", "bull:odd:b", "junk", "bull:odd:gone")
    redis_client.sadd("bull:odd:b:dependencies", "bull:odd:a")
    redis_client.set("bull:odd:c", "not a hash")
    response = await client.get("/queues/api/queues/odd/jobs/a/flow/", {"depth": "4"})
    assert response.status_code == 200, response.content
    flow = response.json()
    # The walk up stops after a hundred parents; the tree down stops at the depth asked.
    assert flow["levelsAboveJob"] == 100 and flow["root"]["id"] == "a"
    nodes = walk(flow["root"])
    assert sorted(n["id"] for n in nodes) == ["a", "a", "a", "b", "b", "gone", "gone"]
    assert [n["cutAtDepth"] for n in nodes if "cutAtDepth" in n] == [True]
    assert {n["state"] for n in nodes if n["id"] == "gone"} == {"removed"}
    unreadable = await client.get("/queues/api/queues/odd/jobs/c/flow/")
    assert unreadable.status_code == 422
