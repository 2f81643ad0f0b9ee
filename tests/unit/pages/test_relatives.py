"""A job's parent and children as a user scoped by QUEUE_ACCESS sees them."""

from __future__ import annotations

from typing import Any

from django.test import override_settings

from dashboard.auth import queue_access
from dashboard.auth.principal import Principal
from dashboard.pages import relatives


def test_hidden_relatives_keep_their_place_unnamed(bullpen_settings: dict[str, Any]) -> None:
    job = {
        "id": "7",
        "parentKey": "bull:t2-a:1",
        "parent": {"id": "1", "queueKey": "bull:t2-a"},
        "parentRef": {"slug": "t2-a", "queue": "t2-a", "id": "1"},
        "opts": {"attempts": 3, "parent": {"id": "1", "queue": "bull:t2-a"}},
        "children": {
            "pending": [
                {"slug": "t1-a", "queue": "t1-a", "id": "8"},
                {"slug": "t2-a", "queue": "t2-a", "id": "9"},
                {"slug": "", "queue": "", "id": "elsewhere:t1-a:10"},  # an unread prefix
            ],
            "processed": [],
        },
    }
    assert relatives.seen_by(queue_access.EVERYTHING, job) is job
    rules = [{"QUEUES": "t1-*", "VIEW": ["*"]}]
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_ACCESS": rules}):
        tenant = queue_access.QueueAccess(queue_access.holder_of(Principal("x", "basic")))
        seen = relatives.seen_by(tenant, job)
        assert seen["parentRef"] == {"hidden": True}
        assert seen["opts"] == {"attempts": 3}
        assert seen["children"]["pending"] == [
            {"slug": "t1-a", "queue": "t1-a", "id": "8"},
            {"hidden": True},
            {"hidden": True},
        ]
        assert "t2-a" not in repr(seen) and "elsewhere" not in repr(seen)
        # Options cut by the page's cap cannot be picked apart: not shown.
        cut = relatives.seen_by(
            tenant, {**job, "opts": '{"parent": {"queue": "bu', "truncated": {"opts": 900}}
        )
        assert cut["opts"] is None and cut["truncated"] == {}
        # A parent the user may view stays as it was.
        own = {**job, "parentRef": {"slug": "t1-a", "queue": "t1-a", "id": "1"}}
        assert relatives.seen_by(tenant, own)["opts"] == job["opts"]
