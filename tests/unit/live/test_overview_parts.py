"""An overview page's live parts: the process keeps every queue's counts as the overview's
messages say them, sums groups and totals from them, and renders the parts once per view and
language, for every page with that view."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from dashboard.live import channel_groups, fanout
from dashboard.live.overview_mirror import OverviewMirror
from dashboard.live.overview_parts import OverviewBatch, view_of
from dashboard.live.render import UNGROUPED
from dashboard.templatetags.bullpen_overview import group_part, row_part
from queues.live import protocol
from queues.live.protocol import OverviewEntry
from queues.redis import connections


def counts(entries: list[OverviewEntry], queues: int, **totals: int) -> protocol.CountsMessage:
    reader = {connections.default_name(): {"queues": queues, "counts": totals}}
    return protocol.overview_counts_message(entries, 5, totals=reader)  # type: ignore[arg-type]


def test_group_sums_follow_each_change_as_a_full_sum_of_every_queue_would() -> None:
    mirror = OverviewMirror()
    mirror.fill(
        counts(
            [
                {"slug": "t1-a", "counts": {"waiting": 2}},
                {"slug": "t1-b", "counts": {"failed": 1}},
                {"slug": "t2-a", "counts": {"waiting": 5}},
            ],
            3,
        )
    )
    head = ("head", "-")
    assert mirror.group_sums(head, fanout.everything()) == {
        "t1": {"waiting": 2, "failed": 1},
        "t2": {"waiting": 5},
    }
    mirror.take(counts([{"slug": "t1-a", "counts": {"active": 1, "waiting": 1}}], 3))
    mirror.take(counts([{"slug": "t3-a", "counts": {"delayed": 4}}], 4))
    kept = mirror.group_sums(head, fanout.everything())
    fresh = OverviewMirror._summed(head, mirror.entries.values())
    assert {k: {s: n for s, n in v.items() if n} for k, v in kept.items()} == fresh
    assert fresh["t1"] == {"waiting": 1, "active": 1, "failed": 1}


def test_a_page_is_sent_its_rows_moved_parts_and_the_readers_totals() -> None:
    mirror = OverviewMirror()
    mirror.fill(counts([{"slug": "mail", "counts": {"waiting": 1}}, {"slug": "billing"}], 2))
    view = view_of(UNGROUPED, {"listed": 2, "shown": ["mail"], "groups": []})
    assert view is not None
    taken = mirror.take(
        counts(
            [
                {"slug": "mail", "counts": {"waiting": 3}},
                {"slug": "billing", "counts": {"failed": 2}},
            ],
            2,
            waiting=3,
            failed=2,
        )
    )
    message = OverviewBatch(mirror, taken).message(view, fanout.everything())
    assert message is not None
    assert set(message) == {"type", "cells", "html", "at", "eventAt"} and message["eventAt"] == 5
    parts = message["cells"] + message["html"]
    mail = row_part("mail")
    assert f'id="{mail}-waiting" class="num state-waiting flash"' in parts
    assert 'aria-label="3 waiting jobs in mail">3</a>' in parts
    assert f'id="{mail}-failed"' not in parts  # only the cells that moved
    assert 'id="overview-total-failed"' in parts and ">2</th>" in parts
    assert "billing" not in parts and row_part("billing") not in parts
    assert 'id="queue-count" data-testid="queue-count">2</span>' in parts


def test_a_page_listing_fewer_queues_than_the_readers_know_is_told_to_list_again() -> None:
    mirror = OverviewMirror()
    mirror.fill(counts([{"slug": "mail", "counts": {"waiting": 1}}], 1))
    taken = mirror.take(counts([{"slug": "fresh", "counts": {"waiting": 1}}], 2, waiting=2))
    batch = OverviewBatch(mirror, taken)
    behind = view_of(UNGROUPED, {"listed": 1, "shown": ["mail"], "groups": []})
    current = view_of(UNGROUPED, {"listed": 2, "shown": ["mail", "fresh"], "groups": []})
    assert behind is not None and current is not None
    told = batch.message(behind, fanout.everything())
    assert told is not None and told["relist"] is True and told["queues"] == 2
    calm = batch.message(current, fanout.everything())
    assert calm is not None and "relist" not in calm and row_part("fresh") in calm["cells"]


def test_a_queue_gone_leaves_the_sums_and_relists_the_pages_that_show_it() -> None:
    mirror = OverviewMirror()
    mirror.fill(
        counts(
            [
                {"slug": "t1-a", "counts": {"waiting": 2}},
                {"slug": "t1-b", "counts": {"waiting": 3}},
                {"slug": "t2-a", "counts": {"waiting": 5}},
            ],
            3,
            waiting=10,
        )
    )
    head = ("head", "-")
    assert mirror.group_sums(head, fanout.everything())["t1"] == {"waiting": 5}
    reader = {connections.default_name(): {"queues": 2, "counts": {"waiting": 7}}}
    gone = protocol.overview_counts_message([], 0, reader, ["t1-b"])  # type: ignore[arg-type]
    batch = OverviewBatch(mirror, mirror.take(gone))
    assert "t1-b" not in mirror.entries
    assert mirror.group_sums(head, fanout.everything())["t1"] == {"waiting": 2}

    showing = view_of(UNGROUPED, {"listed": 3, "shown": ["t1-a", "t1-b"], "groups": []})
    grouped = view_of(head, {"listed": 3, "shown": [], "groups": ["t1"]})
    elsewhere = view_of(UNGROUPED, {"listed": 3, "shown": ["t2-a"], "groups": []})
    assert showing is not None and grouped is not None and elsewhere is not None
    told = batch.message(showing, fanout.everything())
    assert told is not None and told["relist"] is True and told["queues"] == 2
    assert 'id="overview-total-waiting"' in told["cells"] and ">7</th>" in told["cells"]
    assert 'id="queue-count" data-testid="queue-count">2</span>' in told["html"]
    in_group = batch.message(grouped, fanout.everything())
    assert in_group is not None and in_group["relist"] is True
    assert f'id="{group_part("t1")}-waiting"' in in_group["cells"]
    # A page that shows neither the queue nor its group: its totals and count only.
    calm = batch.message(elsewhere, fanout.everything())
    assert calm is not None and "relist" not in calm and ">7</th>" in calm["cells"]
    assert row_part("t1-b") not in calm["cells"] + calm["html"]


def test_a_page_whose_process_lacks_queues_keeps_its_figures_until_it_has_them() -> None:
    """Without a reader's totals (a store's messages carry none), the process sums what it has
    only once it has as many queues as the page lists."""
    mirror = OverviewMirror()
    taken = mirror.take(
        protocol.overview_counts_message([{"slug": "mail", "counts": {"waiting": 1}}])
    )
    grouped = view_of(("head", "-"), {"listed": 2, "shown": ["mail"], "groups": ["mail"]})
    assert grouped is not None
    message = OverviewBatch(mirror, taken).message(grouped, fanout.everything())
    assert message is not None
    assert "overview-total-waiting" not in message["cells"]
    assert group_part("mail") not in message["cells"]
    assert row_part("mail") in message["cells"]


async def test_the_hub_renders_once_per_view_and_sends_scripts_every_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heard: dict[str, list[str]] = {"a": [], "b": [], "other": [], "script": []}
    renders: list[str] = []
    message_of = OverviewBatch.message

    def counted(self: OverviewBatch, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        renders.append(args[0].key)
        return message_of(self, *args, **kwargs)

    monkeypatch.setattr(OverviewBatch, "message", counted)

    def page(name: str) -> fanout.Deliver:
        async def deliver(group: str, text: str) -> None:
            heard[name].append(text)

        return deliver

    hub = fanout.hub()
    group = channel_groups.group_name(("overview",))
    shows_mail = view_of(UNGROUPED, {"listed": 2, "shown": ["mail"], "groups": []})
    shows_both = view_of(UNGROUPED, {"listed": 2, "shown": ["mail", "billing"], "groups": []})
    try:
        for name, view in (("a", shows_mail), ("b", shows_mail), ("other", shows_both)):
            await hub.join(group, page(name), "reader", "en", view_of=lambda v=view: v)
        await hub.join(group, page("script"), "reader")
        entries: list[OverviewEntry] = [
            {"slug": "mail", "counts": {"waiting": 1}},
            {"slug": "billing", "counts": {"failed": 1}},
        ]
        await hub.hand_out(group, counts(entries, 2, waiting=1, failed=1))
        assert len(renders) == 2  # one per view, not one per page
        assert heard["a"] == heard["b"] and len(heard["a"]) == 1
        assert "billing" not in heard["a"][0] and "billing" in heard["other"][0]
        script = json.loads(heard["script"][0])
        assert script["type"] == "counts"
        assert {entry["slug"] for entry in script["queues"]} == {"mail", "billing"}
    finally:
        await fanout.close()


async def test_the_hub_counts_the_time_its_pages_take_to_send_to_for_the_readers_batch() -> None:
    async def slow_page(group: str, text: str) -> None:
        await asyncio.sleep(0.02)

    hub = fanout.hub()
    group = channel_groups.group_name(("status",))
    try:
        await hub.hand_out(group, {"type": "status", "redis": "up"})
        assert hub.send_time.total == 0.0  # nobody watches: nothing sent, nothing counted
        await hub.join(group, slow_page, "reader")
        await hub.hand_out(group, {"type": "status", "redis": "up"})
        assert 0.02 <= hub.send_time.total < 1.0
    finally:
        await fanout.close()
