"""What to tell people about alerts: state per queue and rule, the cooldown, the resolved message.

One notice when a rule starts firing on a queue, none while it goes on firing, and a resolved
notice when it stops, if its start was told; with ``RENOTIFY``, a firing notice again every
so often while it fires. The cooldown counts from the last firing notice of
the same queue and rule: a rule that fires again within it (a flapping threshold) is told only
if it still fires when the cooldown is over, and its end then only if its start was told.

The state is plain data (:meth:`AlertTracker.dump` / :meth:`AlertTracker.load`), so that the
process that sends takes over what the previous sender told (alert_watch.py keeps it in Redis).
Times are wall-clock seconds: they are compared across processes.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from queues.alerts.thresholds import Alert

Key = tuple[str, str]  # (queue slug, rule)
FIRING: Literal["firing"] = "firing"
RESOLVED: Literal["resolved"] = "resolved"


@dataclass(frozen=True)
class Notice:
    """One message to send: ``alert`` is the firing alert, or for a resolved notice the last
    one seen while it fired. ``id`` is the notice's own: every try of it carries the same, so
    that a receiver can drop one it already has."""

    status: Literal["firing", "resolved"]
    queue: str
    alert: Alert
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def key(self) -> Key:
        return (self.queue, self.alert.rule)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "queue": self.queue,
            "alert": self.alert.as_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Notice:
        """The notice ``as_json`` gave (KeyError, TypeError or ValueError if it is not one)."""
        status = data["status"]
        if status not in (FIRING, RESOLVED):
            raise ValueError(f"not a notice's status: {status!r}")
        return cls(status, str(data["queue"]), _alert(data["alert"]), str(data["id"]))


def _alert(data: Mapping[str, Any]) -> Alert:
    window = data.get("windowSeconds")
    return Alert(
        str(data["rule"]),
        _number(data["value"]),
        _number(data["threshold"]),
        tuple(str(s) for s in data.get("signatures") or ()),
        None if window is None else int(window),
    )


def _number(value: Any) -> float:
    """An int as an int (notices say "2", not "2.0"), any other number as a float."""
    return value if isinstance(value, int) and not isinstance(value, bool) else float(value)


@dataclass
class _Entry:
    firing: bool
    told: bool  # this firing's start was sent
    told_at: float | None  # when the last firing notice was sent
    alert: Alert

    def as_json(self) -> dict[str, Any]:
        return {
            "firing": self.firing,
            "told": self.told,
            "toldAt": self.told_at,
            "alert": self.alert.as_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> _Entry:
        return cls(
            bool(data["firing"]),
            bool(data["told"]),
            None if data.get("toldAt") is None else float(data["toldAt"]),
            _alert(data["alert"]),
        )


class AlertTracker:
    def __init__(self, cooldown_s: float, renotify_s: float = 0.0) -> None:
        self.cooldown_s = cooldown_s
        # A rule still firing is told again this long after its last notice (0: never).
        self.renotify_s = renotify_s
        self._entries: dict[Key, _Entry] = {}

    def observe(
        self,
        firing: Mapping[str, Iterable[Alert]],
        now: float,
        undecided: Iterable[Key] = (),
        silenced: Iterable[Key] = (),
        acknowledged: Iterable[Key] = (),
    ) -> list[Notice]:
        """The notices due now, given every alert firing now (per queue slug). Only pass a
        complete reading: a queue or rule missing from it counts as resolved, unless it is
        ``undecided`` (its reading failed): that one stays as it was. A ``silenced`` rule is
        told nothing (still firing when its silence ends, it is told then); an
        ``acknowledged`` one is not told again (RENOTIFY)."""
        unknown, quiet, acked = set(undecided), set(silenced), set(acknowledged)
        seen: dict[Key, Alert] = {
            (queue, alert.rule): alert for queue, alerts in firing.items() for alert in alerts
        }
        notices: list[Notice] = []
        for key, alert in seen.items():
            entry = self._entries.get(key)
            if entry is None or not entry.firing:
                told_at = entry.told_at if entry is not None else None
                entry = self._entries[key] = _Entry(True, False, told_at, alert)
            entry.alert = alert
            if key in quiet:
                continue
            again = key not in acked and self._renotify(entry, now)
            if (not entry.told and self._cooled(entry, now)) or again:
                entry.told, entry.told_at = True, now
                notices.append(Notice(FIRING, key[0], alert))
        for key, entry in self._entries.items():
            if entry.firing and key not in seen and key not in unknown:
                entry.firing = False
                if entry.told:
                    entry.told = False
                    if key not in quiet:
                        notices.append(Notice(RESOLVED, key[0], entry.alert))
        self._forget_cooled(now)
        return notices

    def _renotify(self, entry: _Entry, now: float) -> bool:
        if self.renotify_s <= 0 or not entry.told or entry.told_at is None:
            return False
        return now - entry.told_at >= self.renotify_s

    def _cooled(self, entry: _Entry, now: float) -> bool:
        return entry.told_at is None or now - entry.told_at >= self.cooldown_s

    def _forget_cooled(self, now: float) -> None:
        """Resolved entries whose cooldown is over say nothing a fresh entry would not."""
        for key in [k for k, e in self._entries.items() if not e.firing and self._cooled(e, now)]:
            del self._entries[key]

    def dump(self) -> dict[str, dict[str, Any]]:
        """The state as JSON-ready data, one item per queue and rule."""
        return {_field(key): entry.as_json() for key, entry in self._entries.items()}

    def load(self, dumped: Mapping[str, Mapping[str, Any]]) -> None:
        """Take over a dumped state (unreadable items are dropped: at worst told again)."""
        self._entries = {}
        for field, data in dumped.items():
            queue, sep, rule = field.rpartition("\x00")
            try:
                if sep:
                    self._entries[(queue, rule)] = _Entry.from_json(data)
            except (AttributeError, KeyError, TypeError, ValueError):
                continue


def _field(key: Key) -> str:
    # Rule names hold no NUL: the queue is everything before the last one.
    return f"{key[0]}\x00{key[1]}"
