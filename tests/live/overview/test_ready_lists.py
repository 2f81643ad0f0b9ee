"""The lists a view of every queue keeps (the reader's hand-over, the overview's kept list) are
made beside the live reader once it vouches, a slice of queues at a time, before any view asks
(dashboard/live/ready_lists.py): the first view then makes neither, and lists what a fresh read
of every queue lists."""

from __future__ import annotations

from typing import Any

import pytest
from channels.testing import WebsocketCommunicator

from dashboard.live import channel_groups, ready_lists
from dashboard.pages import overview_ledger, overview_page
from dashboard.pages.overview_list import ListQuery
from queues.alerts import signatures
from queues.handover import summaries as handover_module
from queues.reads.discovery import discovered
from queues.reads.keys import QueueRef
from tests.live.overview.test_overview_ledger_live import afresh
from tests.live.test_pages_from_reader import connect, many_queues, sockets  # noqa: F401
from tests.support.live_reads import TRIES, until
from tests.unit.pages.test_overview_ledger import shape

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What each look of the lists' maker made (None: the readers did not vouch), looking
    every 50 ms."""
    monkeypatch.setattr(ready_lists, "EVERY", 0.05)
    looks: list[Any] = []
    make_ready = ready_lists.make_ready

    async def recorded(last: Any) -> Any:
        looks.append(await make_ready(last))
        return looks[-1]

    monkeypatch.setattr(ready_lists, "make_ready", recorded)
    return looks


def lists_made(made: list[Any]) -> bool:
    return bool(made) and made[-1] is not None


async def test_the_first_view_after_the_reader_vouches_finds_both_lists_made(
    many_queues: None,  # noqa: F811
    sockets: list[WebsocketCommunicator],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    made: list[Any],
) -> None:
    # 200 queues: kept (from 50) and made 30 at a time, as 50,000 are 5,000 at a time.
    monkeypatch.setattr(handover_module, "KEEP_FROM", 50)
    monkeypatch.setattr(handover_module, "SLICE", 30)
    monkeypatch.setattr(overview_ledger, "SLICE", 30)
    watcher = await connect(sockets)
    await watcher.send_json_to({"watch": "overview"})
    follower = channel_groups.ensure_started()
    refs = list((await discovered()).queues)
    assert len(refs) == 200

    # Nothing asks the reader for its summaries here but the lists' maker.
    await until("the lists made beside the reader", lambda: lists_made(made), 60)
    assert made[-1].remakes == overview_page.listing_remakes() >= 1
    assert follower.handover.keeps(refs)

    hand_overs: list[list[QueueRef]] = []
    make = follower.handover._make
    monkeypatch.setattr(
        follower.handover, "_make", lambda asked: hand_overs.append(asked) or make(asked)
    )
    for _ in range(TRIES):
        remakes = overview_page.listing_remakes()
        listing = await overview_page.read_listing(ListQuery(), page=False)
        if listing.live_version:  # the reader vouched: the view took its counts
            assert hand_overs == []
            assert overview_page.listing_remakes() == remakes
            assert shape(listing) == shape(await afresh(ListQuery()))
            return
        # A loaded machine left the reader behind a moment: the view read Redis and made its
        # own list; the maker makes the lists again once the reader vouches again.
        made.clear()
        await until("the lists made again", lambda: lists_made(made), 60)
        hand_overs.clear()
    raise AssertionError(f"the reader did not vouch for any of {TRIES} views")


async def test_the_first_page_after_the_reader_vouches_reads_no_failed_job(
    many_queues: None,  # noqa: F811
    sockets: list[WebsocketCommunicator],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    made: list[Any],
) -> None:
    # Every 25th tenant's mail queue failed a job: the page's alerts read each one's hash to
    # work out its signature, unless the maker read it beside the reader first.
    signatures.reset()
    watcher = await connect(sockets)
    await watcher.send_json_to({"watch": "overview"})
    channel_groups.ensure_started()
    learned: list[Any] = []
    learn = signatures._learn

    async def recording(unknown: list[Any]) -> Any:
        learned.extend(unknown)
        return await learn(unknown)

    monkeypatch.setattr(signatures, "_learn", recording)
    await until("the lists made beside the reader", lambda: lists_made(made), 60)
    failed_jobs = sorted(ref.name for ref, _job, _at in learned)
    assert failed_jobs == ["t025-mail", "t050-mail", "t075-mail", "t100-mail"]
    for _ in range(TRIES):
        learned.clear()
        listing = await overview_page.read_listing(ListQuery(), page=True)
        if listing.live_version:
            assert learned == []
            # What the page shows is what it would have read: the new signature on each page
            # row of a queue that failed a job.
            alerted = {
                q["name"]
                for q in listing.queues
                if any(alert["rule"] == "new_failure_signatures" for alert in q["alerts"])
            }
            assert alerted == {"t025-mail", "t050-mail"}
            return
        made.clear()
        await until("the lists made again", lambda: lists_made(made), 60)
    raise AssertionError(f"the reader did not vouch for any of {TRIES} views")
