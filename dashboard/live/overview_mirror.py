"""Every queue's overview counts as this server process last heard them.

The readers send the overview the counts that change (queues/live/count_changes.py) and, with
each message, their own totals. The pages' live parts (the totals row, each group's figures,
whether a page lists fewer queues than there are) are rendered on the server from these
(overview_parts.py), so this process's hub takes every overview message here once, before it
renders anything (fanout.py). A page that starts watching fills it while it is empty
(consumers.py); it is emptied when the process's last overview page goes, as nothing keeps it
current then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from dashboard.auth.queue_access import QueueAccess
from dashboard.live import render as live_render
from dashboard.live.render import Grouping
from queues.live.protocol import ConnectionTotals, LiveMessage, OverviewEntry
from queues.redis import connections

# Groupings whose sums are kept up to date as counts come (a grouping nobody views for a
# while is summed again from every queue when one does).
KEPT_GROUPINGS = 8


@dataclass
class Taken:
    """What one message changed: each queue's entry now, and as it was before (None: new)."""

    entries: dict[str, OverviewEntry] = field(default_factory=dict)
    before: dict[str, OverviewEntry | None] = field(default_factory=dict)
    event_at: int = 0  # when the oldest event behind these counts was written (0: none)
    at: int = 0  # when the reader sent them
    # Some counts came again unchanged: sent for pages that may have missed a message.
    resent: bool = False
    # Queues that no longer exist (obliterated), with their entries as they were.
    gone: dict[str, OverviewEntry] = field(default_factory=dict)


def counts_messages(message: LiveMessage) -> Iterator[dict[str, Any]]:
    """The ``counts`` messages in ``message`` (one, or those of a batch)."""
    inner = message["messages"] if message["type"] == "batch" else [message]  # type: ignore[typeddict-item]
    for one in inner:
        if one.get("type") == "counts":
            yield cast(dict[str, Any], one)


def changed_states(entry: OverviewEntry | None, before: OverviewEntry | None) -> set[str]:
    """The states whose count differs between two entries of a queue."""
    now = entry.get("counts", {}) if entry else {}
    was = before.get("counts", {}) if before else {}
    return {state for state in now.keys() | was.keys() if now.get(state, 0) != was.get(state, 0)}


class OverviewMirror:
    def __init__(self) -> None:
        self.entries: dict[str, OverviewEntry] = {}
        # Each reader's connection → its number of queues and their summed counts.
        self.totals: dict[str, ConnectionTotals] = {}
        # Grouping → group → state → count, over every queue (kept as entries change).
        self.sums: dict[Grouping, dict[str, dict[str, int]]] = {}
        # Filled from one read of every queue since it was last emptied.
        self.filled = False
        # The number of queues and the totals pages were last sent, per audience: only the
        # figures that moved since are sent again (and flash on the page).
        self.shown_totals: dict[Any, tuple[int, dict[str, int]]] = {}

    def clear(self) -> None:
        self.entries, self.totals, self.sums, self.shown_totals = {}, {}, {}, {}
        self.filled = False

    def fill(self, message: LiveMessage) -> None:
        """Every queue's counts, read at once: they replace what was kept."""
        self.entries, self.sums = {}, {}
        self.take(message)
        self.filled = True

    def forget(self, connection: str) -> None:
        """A connection's reader says its Redis is away: its queues are no longer listed, and
        what it last said of them no longer counts."""
        self.totals.pop(connection, None)
        gone = [slug for slug in self.entries if connections.split_slug(slug)[0] == connection]
        for slug in gone:
            del self.entries[slug]
        if gone:
            self.sums = {}

    def take(self, message: LiveMessage) -> Taken:
        taken = Taken()
        for one in counts_messages(message):
            self.totals.update(one.get("totals") or {})
            event_at = int(one.get("eventAt") or 0)
            if event_at and (not taken.event_at or event_at < taken.event_at):
                taken.event_at = event_at
            taken.at = max(taken.at, int(one.get("at") or 0))
            for entry in cast(list[OverviewEntry], one["queues"]):
                slug = entry["slug"]
                before = self.entries.get(slug)
                taken.resent = taken.resent or before == entry
                self.entries[slug] = entry
                if slug not in taken.before:
                    taken.before[slug] = before
                taken.entries[slug] = entry
                for grouping, sums in self.sums.items():
                    self._move(sums, live_render.group_of(slug, *grouping), before, entry)
            for slug in one.get("gone") or ():
                was = self.entries.pop(slug, None)
                if was is None:
                    continue
                taken.gone[slug] = was
                taken.entries.pop(slug, None)
                for grouping, sums in self.sums.items():
                    self._move(sums, live_render.group_of(slug, *grouping), was, {})
        return taken

    @staticmethod
    def _move(
        sums: dict[str, dict[str, int]],
        key: str,
        before: OverviewEntry | None,
        entry: OverviewEntry,
    ) -> None:
        group = sums.setdefault(key, {})
        for state, n in (before or {}).get("counts", {}).items():
            group[state] = group.get(state, 0) - n
        for state, n in entry.get("counts", {}).items():
            group[state] = group.get(state, 0) + n

    def reader_totals(self, names: Iterable[str]) -> tuple[int, dict[str, int]] | None:
        """The readers' own totals summed, when every connection's reader has sent its own."""
        found = [self.totals.get(name) for name in names]
        if not found or any(one is None for one in found):
            return None
        summed: dict[str, int] = {}
        for one in cast(list[ConnectionTotals], found):
            for state, n in one["counts"].items():
                summed[state] = summed.get(state, 0) + n
        return sum(one["queues"] for one in cast(list[ConnectionTotals], found)), summed

    def visible(self, access: QueueAccess) -> list[OverviewEntry]:
        if not access.restricted:
            return list(self.entries.values())
        return [entry for slug, entry in self.entries.items() if access.may_view(slug)]

    def group_sums(self, grouping: Grouping, access: QueueAccess) -> dict[str, dict[str, int]]:
        """Each group's counts over every queue ``access`` may view."""
        if access.restricted:
            return self._summed(grouping, self.visible(access))
        sums = self.sums.get(grouping)
        if sums is None:
            if len(self.sums) >= KEPT_GROUPINGS:
                self.sums.pop(next(iter(self.sums)))
            sums = self.sums[grouping] = self._summed(grouping, self.entries.values())
        return sums

    @staticmethod
    def _summed(grouping: Grouping, entries: Iterable[OverviewEntry]) -> dict[str, dict[str, int]]:
        sums: dict[str, dict[str, int]] = {}
        for entry in entries:
            group = sums.setdefault(live_render.group_of(entry["slug"], *grouping), {})
            for state, n in entry.get("counts", {}).items():
                group[state] = group.get(state, 0) + n
        return sums
