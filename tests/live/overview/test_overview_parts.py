"""An overview page's socket, as the page's watch describes it (its rows, groups and how many
queues its list counts): it is sent its live parts rendered on the server, and nothing about
the queues it does not show."""

from __future__ import annotations

import html
import re

import pytest
from channels.testing import WebsocketCommunicator

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from dashboard.templatetags.bullpen_overview import group_part, row_part
from tests.support.live_reads import Message, _unread, run_peer, wait_for
from tests.support.peer import Peer

# Channels closes stale database connections around each websocket event.
pytestmark = pytest.mark.django_db(transaction=True)


def cell(message: Message, part: str) -> str | None:
    """The text of the part with id ``part`` in an overview message (None: not in it)."""
    if message.get("type") != "overview":
        return None
    found = re.search(rf'<t[dh] id="{re.escape(part)}"[^>]*>(.*?)</t[dh]>', message["cells"])
    return None if found is None else re.sub(r"<[^>]+>", "", found.group(1))


def label(message: Message, part: str) -> str | None:
    """The aria-label of the count link in the cell with id ``part``."""
    pattern = rf'id="{re.escape(part)}"[^>]*><a [^>]*aria-label="([^"]*)"'
    found = re.search(pattern, message["cells"])
    return None if found is None else html.unescape(found.group(1))


def latest(messages: list[Message], part: str) -> str | None:
    """The text of ``part`` as the last of ``messages`` that holds it says."""
    found = [cell(message, part) for message in messages]
    return next((text for text in reversed(found) if text is not None), None)


async def test_an_overview_page_is_sent_its_rows_parts_and_the_totals_only(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    await run_peer(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    await run_peer(peer, "add", "--queue", "billing", "--name", "a", "--data", "{}")
    await wait_for(socket, lambda m: m["type"] == "status")
    # The page lists two queues and shows the row of one.
    await socket.send_json_to({"watch": "overview", "listed": 2, "shown": ["mail"]})
    mail = row_part("mail") + "-waiting"
    first, _ = await wait_for(socket, lambda m: cell(m, "overview-total-waiting") == "2")
    assert cell(first, mail) == "1"
    assert "queues" not in first and "relist" not in first

    await run_peer(peer, "add", "--queue", "billing", "--name", "b", "--data", "{}")
    await run_peer(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    moved, before = await wait_for(socket, lambda m: cell(m, mail) == "2")
    # The link's name says the new number, in the server's words.
    assert label(moved, mail) == "2 waiting jobs in mail"
    assert f'id="{mail}" class="num state-waiting flash"' in moved["cells"]
    sent = [*before, moved]
    if latest(sent, "overview-total-waiting") != "4":
        last, more = await wait_for(socket, lambda m: cell(m, "overview-total-waiting") == "4")
        sent += [*more, last]
    totals = [cell(m, "overview-total-waiting") for m in sent if m["type"] == "overview"]
    assert [int(n) for n in totals if n] == sorted(int(n) for n in totals if n)
    # Nothing about billing, whose row the page does not show, beyond the totals.
    for message in sent:
        assert message["type"] != "counts"
        if message["type"] == "overview":
            parts = message["cells"] + message["html"]
            assert row_part("billing") not in parts and "billing" not in parts
            assert set(message) <= {"type", "cells", "html", "at", "eventAt"}
    # When it was sent and the age of the oldest event behind it (0 when a re-read moved the
    # counts without one, as a loaded machine's reader may).
    assert 0 <= moved["eventAt"] <= moved["at"]


async def test_a_grouped_overview_gets_its_groups_figures_summed_by_the_server(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    for queue in ("eu-mail", "eu-billing", "us-mail"):
        await run_peer(peer, "add", "--queue", queue, "--name", "a", "--data", "{}")
    await wait_for(socket, lambda m: m["type"] == "status")
    await socket.send_json_to(
        {"watch": "overview", "group": "head", "delimiter": "-", "listed": 3, "groups": ["eu"]}
    )
    eu_waiting, us_waiting = group_part("eu") + "-waiting", group_part("us") + "-waiting"
    first, _ = await wait_for(socket, lambda m: cell(m, eu_waiting) == "2")
    assert cell(first, us_waiting) is None  # a group the page does not show
    # A job of eu-mail fails: the group's waiting and failed figures follow.
    await run_peer(peer, "work", "--queue", "eu-mail", "--count", "1", "--fail")
    eu_failed = group_part("eu") + "-failed"
    moved, before = await wait_for(socket, lambda m: cell(m, eu_failed) == "1")
    assert cell(moved, eu_waiting) == "1"  # a group's figures come whole
    # The totals come as they move: each as the last message that held it says.
    assert latest([first, *before, moved], "overview-total-failed") == "1"
    assert latest([first, *before, moved], "overview-total-waiting") == "2"


async def test_an_overview_listing_fewer_queues_than_there_are_is_told_to_list_again(
    socket: WebsocketCommunicator, peer: Peer
) -> None:
    await run_peer(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    await wait_for(socket, lambda m: m["type"] == "status")
    await socket.send_json_to({"watch": "overview", "listed": 1, "shown": ["mail"]})
    await wait_for(socket, lambda m: cell(m, "overview-total-waiting") == "1")
    await run_peer(peer, "add", "--queue", "fresh", "--name", "a", "--data", "{}")
    told, _ = await wait_for(socket, lambda m: bool(m.get("relist")))
    assert told["queues"] == 2
    assert 'id="queue-count"' in told["html"]
    # The page's list, fetched again, counts both: it is told no more. (An update already on
    # its way when the page said so was rendered for the list of one, and says relist: the
    # socket's answer to the new list comes first, here as on a page.)
    await socket.send_json_to({"watch": "overview", "listed": 2, "shown": ["fresh", "mail"]})
    await wait_for(
        socket, lambda m: 'id="queue-count"' in m.get("html", "") and not m.get("relist")
    )
    await run_peer(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
    calm, _ = await wait_for(socket, lambda m: cell(m, row_part("mail") + "-waiting") == "2")
    assert "relist" not in calm


async def test_a_watch_that_says_a_bad_count_of_queues_is_refused(
    socket: WebsocketCommunicator,
) -> None:
    await wait_for(socket, lambda m: m["type"] == "status")
    for listed in (-1, "3", True, 1.5):
        await socket.send_json_to({"watch": "overview", "listed": listed})
        refused, _ = await wait_for(socket, lambda m: m["type"] == "error")
        assert "listed must be a count of queues" in refused["error"]


async def test_each_page_gets_the_parts_in_its_own_language(peer: Peer) -> None:
    """Two pages with the same view, one in German: the same update, each rendered once in
    its page's language (the count link's name in the server's words)."""
    await run_peer(peer, "add", "--queue", "mail", "--name", "a", "--data", "{}")
    english = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/?lang=en")
    german = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/?lang=de")
    try:
        for socket in (english, german):
            assert (await socket.connect())[0]
            await wait_for(socket, lambda m: m["type"] == "status")
            await socket.send_json_to({"watch": "overview", "listed": 1, "shown": ["mail"]})
            await wait_for(socket, lambda m: cell(m, "overview-total-waiting") == "1")
        await run_peer(peer, "add", "--queue", "mail", "--name", "b", "--data", "{}")
        mail = row_part("mail") + "-waiting"
        in_english, _ = await wait_for(english, lambda m: cell(m, mail) == "2")
        in_german, _ = await wait_for(german, lambda m: cell(m, mail) == "2")
        assert label(in_english, mail) == "2 waiting jobs in mail"
        assert label(in_german, mail) == "2 Jobs (wartend) in mail"
    finally:
        for socket in (english, german):
            _unread.pop(id(socket), None)
            await socket.disconnect()
        await channel_groups.stop()
