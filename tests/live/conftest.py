"""Fixtures of the live tests (tests/live/ and its folders)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from channels.testing import WebsocketCommunicator

from dashboard.live import channel_groups
from dashboard.live.consumers import LiveConsumer
from tests.support.live_reads import _unread


@pytest.fixture
async def socket() -> AsyncIterator[WebsocketCommunicator]:
    """A page's websocket on the consumer in this process, closed after the test."""
    communicator = WebsocketCommunicator(LiveConsumer.as_asgi(), "/ws/bullpen/")
    connected, _ = await communicator.connect()
    assert connected
    yield communicator
    _unread.pop(id(communicator), None)
    try:
        await communicator.disconnect()
    finally:
        await channel_groups.stop()  # also when the socket did not close: nothing outlives it
