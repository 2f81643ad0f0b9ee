"""The pure parts of reading a flow: a job's parent, nodes cut to a budget, and the members
of a tree read breadth first."""

from __future__ import annotations

import json

from queues.live.interest import Interest
from queues.live.watching import Watching
from queues.reads.flow import FlowNode, _parent_of, _within, members
from queues.reads.keys import QueueRef


def test_the_parent_from_its_json_then_from_its_key() -> None:
    given = {"parent": '{"id": "7", "queueKey": "bull:orders"}', "parentKey": "bull:x:1"}
    assert _parent_of(given) == (QueueRef("bull", "orders"), "7")
    assert _parent_of({"parentKey": "bull:orders:repeat:a:1"}) == (
        QueueRef("bull", "orders"),
        "repeat:a:1",
    )
    assert _parent_of({"parent": "not json", "parentKey": "bull:orders:9"}) == (
        QueueRef("bull", "orders"),
        "9",
    )
    assert _parent_of({"parentKey": "elsewhere:orders:9"}) is None  # a prefix not read here
    assert _parent_of({}) is None


def test_a_level_past_the_budget_leaves_its_parents_children() -> None:
    parent = FlowNode(QueueRef("bull", "p"), "1", {"children": [], "more": 0})
    kids = [FlowNode(QueueRef("bull", "c"), str(i), {"id": str(i)}, parent) for i in range(4)]
    parent.out["children"] = [kid.out for kid in kids]
    kept = _within(kids, 1)
    assert kept == kids[:1]
    assert parent.out["children"] == [{"id": "0"}] and parent.out["more"] == 3
    assert _within(kids[:1], 0) == [] and parent.out["children"] == []


def test_members_breadth_first() -> None:
    tree = {
        "root": {
            "queue": "a",
            "id": "1",
            "children": [
                {"queue": "b", "id": "2", "children": [{"queue": "c", "id": "4", "children": []}]},
                {"queue": "b", "id": "3", "children": []},
            ],
        }
    }
    assert members(tree) == [("a", "1"), ("b", "2"), ("b", "3"), ("c", "4")]


def test_a_flow_trees_jobs_are_watched_for_their_state_alone() -> None:
    registry = Interest()
    assert registry.watch_node("mail", "7") and not registry.empty
    published = json.loads(registry.as_json())
    assert (published["nodes"], published["jobs"]) == ([["mail", "7"]], [])
    watching = Watching()
    watching.add_own(registry)
    # Their state changes are sent (rows.py); no log is tailed for them (logs.py reads jobs).
    assert (watching.nodes, watching.jobs) == ({("mail", "7")}, set())
    registry.unwatch_node("mail", "7")
    assert registry.empty
