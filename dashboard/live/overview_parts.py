"""The overview's live parts, rendered on the server for what each page shows.

An overview page says what it shows (its rows, its groups, how it groups, how many queues it
lists: :class:`OverviewView`); on every counts update its socket is sent, rendered by the same
partials the page is: the totals row over every queue, the figures of the page's groups that
moved, the count cells and pause badges of its rows that moved, and the number of queues, with
``relist`` when there are more than the page lists, or when a queue it shows (or one of its
groups holds) is gone (the page then asks for its list again). Nothing about the queues a page
does not show is sent. Pages with the same view and language share one rendering (fanout.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string

from dashboard.auth.queue_access import QueueAccess
from dashboard.live import render as live_render
from dashboard.live.overview_mirror import OverviewMirror, Taken, changed_states
from dashboard.live.render import UNGROUPED, Grouping
from dashboard.pages.overview_list import COLUMNS
from queues.config.queue_options import queue_options
from queues.live.protocol import OverviewEntry, now_ms
from queues.reads.jsontext import dumps
from queues.redis import connections

# A page's table cells (totals, groups' figures, rows' counts) and its other parts (the number
# of queues, rows' pause badges): markup parsed apart, as table cells parse only among cells.
CELLS = "bullpen/_overview_live_cells.html"
PARTS = "bullpen/_overview_live.html"


@dataclass(frozen=True)
class OverviewView:
    """What one overview page shows, as its socket said: pages with the same ``key`` are sent
    the same bytes."""

    grouping: Grouping
    shown: frozenset[str]  # the queues of its rows
    groups: frozenset[str]  # the keys of its groups
    listed: int  # how many queues its list counts
    key: str


def view_of(grouping: Grouping, asked: dict[str, Any]) -> OverviewView | None:
    """The view an overview's watch describes; None for one that says not how many queues it
    lists (it is sent every queue's counts)."""
    listed, shown, groups = asked["listed"], asked["shown"], asked["groups"]
    if listed is None:
        return None
    described = json.dumps([grouping, sorted(shown), sorted(groups), listed])
    key = hashlib.blake2b(described.encode(), digest_size=12).hexdigest()
    return OverviewView(grouping, frozenset(shown), frozenset(groups), listed, key)


@dataclass
class Figures:
    """An audience's figures: how many queues there are and their counts summed, and how many
    queues this process has counts of."""

    queues: int
    totals: dict[str, int]
    counted: int
    changed: frozenset[str]  # the states whose total moved since pages were last sent them
    moved: frozenset[str]  # those of them that flash (none the first time)

    @property
    def changed_states(self) -> tuple[str, ...]:
        return tuple(state for state in COLUMNS if state in self.changed)

    from_readers: bool  # the readers' own totals, true whatever this process has counts of
    queues_changed: bool


class OverviewBatch:
    """One update's parts, each worked out once for every page that shows it."""

    def __init__(self, mirror: OverviewMirror, taken: Taken | None) -> None:
        self.mirror = mirror
        self.taken = taken
        self._figures: dict[Any, Figures] = {}
        self._rows: dict[str, dict[str, Any]] = {}
        self._groups: dict[tuple[Any, Grouping], dict[str, dict[str, int]]] = {}

    def figures(self, access: QueueAccess) -> Figures:
        found = self._figures.get(access.audience)
        if found is not None:
            return found
        mirror = self.mirror
        readers = None if access.restricted else mirror.reader_totals(connections.names())
        counted = len(mirror.entries)
        if readers is not None:
            queues, totals = readers
        else:
            visible = mirror.visible(access)
            counted = len(visible)
            totals = {}
            for entry in visible:
                for state, n in entry.get("counts", {}).items():
                    totals[state] = totals.get(state, 0) + n
            queues = counted
        totals = every_state(totals)
        # Only the figures that moved since the audience's pages were last sent theirs.
        was_queues, was = mirror.shown_totals.get(access.audience, (None, None))
        changed = frozenset(
            state for state in COLUMNS if was is None or was.get(state, 0) != totals.get(state, 0)
        )
        mirror.shown_totals[access.audience] = (queues, totals)
        moved = frozenset() if was is None else changed
        found = Figures(
            queues, totals, counted, changed, moved, readers is not None, was_queues != queues
        )
        self._figures[access.audience] = found
        return found

    def row(self, slug: str) -> dict[str, Any] | None:
        """A queue's row parts as the page's row renders them."""
        found = self._rows.get(slug)
        if found is None:
            entry = self.mirror.entries.get(slug)
            if entry is None:
                return None
            before = None if self.taken is None else self.taken.before.get(slug)
            if self.taken is None or before == entry:
                # A page that starts watching, or counts sent again unchanged for pages that
                # may have missed a message: the whole row.
                found = row_of(entry, COLUMNS, set(), True)
            else:
                changed = changed_states(entry, before)
                # Only the cells that moved, and the pause badge if it did.
                shown = [state for state in COLUMNS if state in changed]
                found = row_of(entry, shown, changed, paused_of(before) != paused_of(entry))
            self._rows[slug] = found
        return found

    def message(
        self,
        view: OverviewView,
        access: QueueAccess,
        rows: list[str] | None = None,
    ) -> dict[str, Any] | None:
        """What a page with ``view`` is sent: the parts that moved in this update, or, for a
        page that starts watching (no update taken), its figures and ``rows``' parts. None:
        nothing for it."""
        first = self.taken is None
        figures = self.figures(access)
        gone = [] if self.taken is None else [s for s in self.taken.gone if access.may_view(s)]
        # A page lists every queue it may view: until this process has the counts of as many
        # (before a reader's first message reaches it), sums of its own would fall short and
        # the page's figures stand; the readers' own totals hold from their first message.
        complete = figures.counted >= view.listed - len(gone)
        known = figures.from_readers or complete
        if rows is None:
            changed = self.taken.entries if self.taken is not None else {}
            rows = [slug for slug in changed if slug in view.shown]
        # A queue the page shows, or one of its groups holds, is gone: the list again, without
        # it (the page does not drop rows itself).
        dropped = any(
            slug in view.shown or live_render.group_of(slug, *view.grouping) in view.groups
            for slug in gone
        )
        relist = (known and figures.queues > view.listed) or dropped
        whole = first or (self.taken is not None and self.taken.resent)
        counted_again = whole or relist or figures.queues_changed
        context: dict[str, Any] = {
            "queue_count": figures.queues if known and counted_again else None,
            "totals": figures.totals if known else None,
            "totals_states": (COLUMNS if whole else figures.changed_states) if known else (),
            "totals_changed": () if first else figures.moved,
            "states": COLUMNS,
            "groups": self._group_parts(view, access, first) if complete else [],
            "rows": [
                found
                for found in (self.row(slug) for slug in rows if access.may_view(slug))
                if found is not None and (found["states"] or found["pause"])
            ],
        }
        if not (context["rows"] or context["groups"] or relist or context["totals_states"]):
            return None
        taken = self.taken
        message: dict[str, Any] = {
            "type": "overview",
            "cells": render_to_string(CELLS, context),
            "html": render_to_string(PARTS, context),
            "at": taken.at if taken is not None and taken.at else now_ms(),
            "eventAt": taken.event_at if taken is not None else 0,
        }
        if relist:
            message["relist"] = True
            message["queues"] = figures.queues
        return message

    def encode(self, view: OverviewView, access: QueueAccess) -> str:
        found = self.message(view, access)
        return "" if found is None else dumps(found).decode()

    def _group_parts(
        self, view: OverviewView, access: QueueAccess, first: bool
    ) -> list[dict[str, Any]]:
        if view.grouping == UNGROUPED or not view.groups:
            return []
        grouping = view.grouping
        changed: dict[str, set[str]] = {}
        if first:
            changed = {key: set() for key in view.groups}
        elif self.taken is not None:
            for slug, entry in self.taken.entries.items():
                key = live_render.group_of(slug, *grouping)
                if key in view.groups and access.may_view(slug):
                    moved = changed_states(entry, self.taken.before.get(slug))
                    changed.setdefault(key, set()).update(moved)
            for slug, was in self.taken.gone.items():
                key = live_render.group_of(slug, *grouping)
                if key in view.groups and access.may_view(slug):
                    changed.setdefault(key, set()).update(changed_states(None, was))
        if not changed:
            return []
        cache = (access.audience, grouping)
        sums = self._groups.get(cache)
        if sums is None:
            sums = self._groups[cache] = self.mirror.group_sums(grouping, access)
        return [
            {"key": key, "counts": every_state(sums.get(key, {})), "changed": moved}
            for key, moved in sorted(changed.items())
        ]


def every_state(counts: dict[str, int]) -> dict[str, int]:
    """Each column's count, 0 where none is kept (as the page's own figures are)."""
    return {state: counts.get(state, 0) for state in COLUMNS}


def row_of(
    entry: OverviewEntry, states: Sequence[str], changed: set[str], pause: bool
) -> dict[str, Any]:
    """A row's parts: the count cells of ``states`` (``changed`` ones flash), and its pause
    badge when ``pause``."""
    slug = entry["slug"]
    name = entry.get("name", slug)
    return {
        "slug": slug,
        "displayName": queue_options(slug).get("display_name") or name,
        "counts": entry.get("counts", {}),
        "paused": bool(entry.get("paused")),
        "pauseReason": entry.get("pauseReason", ""),
        "states": states,
        "changed": changed,
        "pause": pause,
    }


def paused_of(entry: OverviewEntry | None) -> tuple[bool, str]:
    if entry is None:
        return False, ""
    return bool(entry.get("paused")), entry.get("pauseReason", "")
