"""The alert sender: every ``ALERTS["INTERVAL"]`` seconds, in the one process holding the live
follower's lease, read every queue's alerts (alerts.py), decide what to tell (alert_state.py)
and hand each notice to the deliverer (dashboard/alerts/delivery.py: e-mail, webhooks, audit).

Only the lease holder evaluates, so a deployment of several processes tells each notice once.
What was told, and when, is kept in Redis (``<LIVE_KEY_PREFIX>:alerts:state``): the process
that takes the lease over goes on from there rather than tell every firing alert again. So are
the notices not yet delivered to every target (``<LIVE_KEY_PREFIX>:alerts:undelivered``,
alert_undelivered.py), tried again at the passes they are due.
Nothing is read while no address or webhook is configured. A pass that cannot read Redis
decides nothing (no alert is resolved by an outage); the next pass reads again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from redis.exceptions import RedisError

from queues.alerts import decided, minutes, oldest_kept
from queues.alerts.rules import read_rules
from queues.alerts.silences import end_acknowledgements, read_holds
from queues.alerts.state import RESOLVED, AlertTracker, Key, Notice
from queues.alerts.thresholds import COUNTED, read_alerts, thresholds
from queues.alerts.undelivered import Kept, Undelivered
from queues.cancelling import cancel_and_wait, finish_despite_cancel, raise_if_cancelled
from queues.config.settings import get_config
from queues.errors import BullpenError
from queues.reads.counts import Known, summaries
from queues.redis.clients import get_client
from queues.redis.connections import own_key_prefix

log = logging.getLogger("bullpen.alerts")

# (notice, the targets to tell, whether it is a later round) → the targets it did not reach
# and that may take it later.
Deliver = Callable[[Notice, frozenset[str], bool], Awaitable[frozenset[str]]]
# Redis away or refusing: the pass is skipped and tried again at the next one.
_TROUBLE = (BullpenError, RedisError, OSError)


@dataclass(frozen=True)
class DeliverySettings:
    """The delivery keys of ``ALERTS`` (docs/configuration.md)."""

    email_to: tuple[str, ...] = ()
    webhooks: tuple[str, ...] = ()
    cooldown_s: float = 900.0
    interval_s: float = 30.0
    renotify_s: float = 0.0
    # The site's public origin (and path prefix, behind a proxy that adds one): links in
    # notices are this plus the queue page's path.
    link_base: str = ""

    @property
    def anyone(self) -> bool:
        """Someone is to be told: an address or a webhook is configured."""
        return bool(self.email_to or self.webhooks)

    @property
    def targets(self) -> tuple[str, ...]:
        """The targets' names for keeping what reached whom: a webhook by a digest of its URL,
        which often holds a secret and is not to be written to Redis."""
        return (("e-mail",) if self.email_to else ()) + tuple(map(webhook_target, self.webhooks))

    @classmethod
    def from_config(cls) -> DeliverySettings:
        """The settings; a value of the wrong kind (reported by ``manage.py check``) reads as
        its default, since every request asks (dashboard/alerts/sender.py)."""
        given = get_config().get("ALERTS")
        if not isinstance(given, Mapping):
            return cls()
        return cls(
            email_to=_strings(given.get("EMAIL_TO")),
            webhooks=_strings(given.get("WEBHOOKS")),
            cooldown_s=_seconds(given.get("COOLDOWN"), cls.cooldown_s, least=0.0),
            interval_s=_seconds(given.get("INTERVAL"), cls.interval_s, least=0.01),
            renotify_s=_seconds(given.get("RENOTIFY"), cls.renotify_s, least=0.0),
            link_base=str(given.get("LINK_BASE") or ""),
        )


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, (list, tuple)) else ()


def _seconds(value: Any, default: float, *, least: float) -> float:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if number and value >= least else default


def webhook_target(url: str) -> str:
    return "webhook:" + hashlib.sha256(url.encode()).hexdigest()[:16]


def state_key() -> str:
    return f"{own_key_prefix()}:alerts:state"


def undelivered_key() -> str:
    return f"{own_key_prefix()}:alerts:undelivered"


class AlertWatch:
    def __init__(
        self,
        deliver: Deliver,
        holds_lease: Callable[[], bool],
        known_counts: Callable[[], Known] | None = None,
    ) -> None:
        """``holds_lease``: whether this process holds the live follower's lease now;
        ``known_counts``: for each pass, the counts the process's live reader keeps, read
        from Redis only where it has none (the reader runs where the lease is)."""
        self.deliver = deliver
        self.holds_lease = holds_lease
        self.known_counts = known_counts
        self.tracker = AlertTracker(DeliverySettings.cooldown_s)
        self._leading = False  # evaluating, with the state taken over from Redis
        self._saved: dict[str, Any] | None = None
        self.undelivered = Undelivered()
        self._undelivered_saved: list[dict[str, Any]] | None = None
        self._saving = asyncio.Lock()
        self._sending: dict[Key, asyncio.Task[None]] = {}
        self._troubled = False  # Redis trouble already logged: one line per outage

    async def run(self) -> None:
        try:
            while True:
                raise_if_cancelled()
                interval = DeliverySettings.interval_s
                try:
                    settings = DeliverySettings.from_config()
                    interval = settings.interval_s
                    await self.evaluate(settings)
                except _TROUBLE as error:
                    if not self._troubled:
                        log.warning("alerts: cannot read the queues, trying again: %s", error)
                    self._troubled = True
                except Exception:  # a bug or a bad setting must not end alerts for good
                    log.exception("alerts: this evaluation failed")
                else:
                    if self._troubled:
                        log.info("alerts: reading the queues again")
                    self._troubled = False
                await asyncio.sleep(interval)
        finally:
            # To its end although the stopper cancels again meanwhile: a send still ending
            # when it does would run on past the stop, on Redis.
            await finish_despite_cancel(cancel_and_wait(*self._sending.values()))

    async def evaluate(self, settings: DeliverySettings) -> list[Notice]:
        """One pass: the notices it started sending (none unless this process holds the lease
        and someone is to be told)."""
        if not settings.anyone or not self.holds_lease():
            self._leading = False
            return []
        redis = get_client()
        if not self._leading:
            # Taken over: nothing kept from before (another process evaluated meanwhile).
            decided.forget()
            minutes.forget()
            oldest_kept.forget()
            stored = await redis.get(state_key())
            undelivered = await redis.get(undelivered_key())  # another slot in a cluster
            self.tracker.load(_parsed(stored))
            self._saved = self.tracker.dump()
            self.undelivered.load(_parsed(undelivered, list))
            self._undelivered_saved = self.undelivered.dump()
            self._leading = True
        for kept in self.undelivered.due(time.time()):
            if kept.notice.key not in self._sending:  # one round at a time per queue and rule
                self._chain(kept.notice.key, partial(self._retry, kept))
        self.tracker.cooldown_s = settings.cooldown_s
        self.tracker.renotify_s = settings.renotify_s
        known = self.known_counts() if self.known_counts is not None else None
        found = await summaries(states=COUNTED, known=known)
        limits = {s.ref: thresholds(s.ref.slug) for s in found}
        still = getattr(known, "still", None)
        firing = await read_alerts(found, limits, still)
        more = await read_rules(found, limits=limits, still=still)
        for ref, alerts in more.alerts.items():
            firing.setdefault(ref, []).extend(alerts)
        slugs = {s.ref: s.ref.slug for s in found}
        undecided = {(slugs[ref], rule) for ref, rules in more.undecided.items() for rule in rules}
        now = time.time()
        holds = await read_holds(now)
        notices = self.tracker.observe(
            {slugs[ref]: alerts for ref, alerts in firing.items()},
            now,
            undecided,
            silenced=[key for key, hold in holds.items() if hold.silenced(now)],
            acknowledged=[key for key, hold in holds.items() if hold.acknowledged_by],
        )
        fired = {(slugs[ref], alert.rule) for ref, alerts in firing.items() for alert in alerts}
        await end_acknowledgements(
            key
            for key, hold in holds.items()
            if hold.acknowledged_by and key not in fired and key not in undecided
        )
        await self._save()
        for notice in notices:
            self._send(notice)
        return notices

    async def _save(self) -> None:
        state = self.tracker.dump()
        if state == self._saved:
            return
        try:
            await get_client().set(state_key(), json.dumps(state))
            self._saved = state
        except RedisError as error:  # refused (maxmemory): a takeover may tell some again
            log.warning("alerts: cannot keep what was told in Redis: %s", error)

    def _send(self, notice: Notice) -> None:
        """Deliver in the background, in order per queue and rule (a resolved notice never
        overtakes its firing one that is still being tried)."""
        self._chain(notice.key, partial(self._first_round, notice))

    def _chain(self, key: Key, work: Callable[[], Awaitable[None]]) -> None:
        previous = self._sending.get(key)
        task = asyncio.get_running_loop().create_task(
            self._after(previous, work), name="bullpen-alert-delivery"
        )
        self._sending[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))

    async def _after(
        self, previous: asyncio.Task[None] | None, work: Callable[[], Awaitable[None]]
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        await work()

    async def _first_round(self, notice: Notice) -> None:
        targets = frozenset(DeliverySettings.from_config().targets)
        if notice.status == RESOLVED:
            unseen = self.undelivered.never_told(notice)
            targets -= unseen
        await self._round(notice, targets, later=False)

    async def _retry(self, kept: Kept) -> None:
        if kept.notice.id not in self.undelivered:
            return  # dropped since it was due (its alert ended)
        # Targets no longer configured are owed nothing.
        targets = kept.owed & frozenset(DeliverySettings.from_config().targets)
        await self._round(kept.notice, targets, later=True)

    async def _round(self, notice: Notice, targets: frozenset[str], *, later: bool) -> None:
        owed = targets
        try:
            if targets:
                owed = await self.deliver(notice, targets, later)
        except Exception:  # the deliverer logs its own failures; this is a bug
            log.exception("alerts: delivering %s on %s failed", notice.alert.rule, notice.queue)
        self.undelivered.tried(notice, owed, time.time())
        await self._save_undelivered()

    async def _save_undelivered(self) -> None:
        """One write at a time, each of the state as it is then: the last write is the newest."""
        async with self._saving:
            state = self.undelivered.dump()
            if state == self._undelivered_saved:
                return
            try:
                if state:
                    await get_client().set(undelivered_key(), json.dumps(state))
                else:
                    await get_client().delete(undelivered_key())
                self._undelivered_saved = state
            except _TROUBLE as error:  # kept here; a takeover may miss or repeat some
                log.warning("alerts: cannot keep the undelivered notices in Redis: %s", error)

    def _forget(self, key: Key, done: asyncio.Task[None]) -> None:
        if self._sending.get(key) is done:
            del self._sending[key]


def _parsed(stored: Any, kind: type = dict) -> Any:
    """``stored`` JSON if it holds a ``kind``; an empty one otherwise."""
    try:
        data = json.loads(stored) if stored else kind()
    except ValueError:
        return kind()
    return data if isinstance(data, kind) else kind()
