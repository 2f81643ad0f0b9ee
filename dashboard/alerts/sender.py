"""This process's alert sender (queues/alerts/watch.py), started with the process's other
services (dashboard/services/lifecycle.py) and evaluating only while the live reader's follower
of the default connection holds the lease, so that each notice is sent once per deployment.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from dashboard.alerts.delivery import deliver
from dashboard.live.reader_counts import ReaderCounts
from dashboard.services import registry
from dashboard.services.registry import Slot
from queues.alerts.watch import AlertWatch, DeliverySettings
from queues.redis import connections

ALERT_SENDER: Slot[AlertWatch] = Slot("alert-sender")


def wanted() -> bool:
    """Whether anyone is to be told (``ALERTS["EMAIL_TO"]`` or ``["WEBHOOKS"]``), and can be:
    the sender keeps what it sent in Redis, so a deployment without one sends nothing."""
    return connections.state_on_redis() and DeliverySettings.from_config().anyone


def ensure_running(holds_lease: Callable[[], bool]) -> AlertWatch | None:
    """Start this loop's sender when someone is to be told (none otherwise)."""
    found = registry.running(ALERT_SENDER)
    if found is not None or not wanted():
        return found

    def make(ended: AlertWatch | None) -> tuple[AlertWatch, Coroutine[Any, Any, None]]:
        # A pass takes the counts the live reader keeps, as a page does (reader_counts.py).
        watch = AlertWatch(deliver, holds_lease, known_counts=ReaderCounts)
        return watch, watch.run()

    return registry.ensure(ALERT_SENDER, make)


async def stop() -> None:
    """Stop this loop's sender."""
    await registry.stop(ALERT_SENDER)
