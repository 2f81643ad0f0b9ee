"""Which queues one overview page lists: filtered by name and by problems, grouped, sorted and
cut into pages. Pure: the rules, over every queue's row. Views keep their results between them
(overview_ledger.py, which makes only the page's rows and answers what ``list_queues`` answers),
so the HTML page and ``api/queues/`` list exactly the same queues in the same order.

A queue is a dict as :func:`dashboard.api.serializers.queue_json` makes it, with ``alerts`` (the
rules firing on it) and, when workers were looked up, ``workers`` (their number).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from django.utils.translation import gettext_lazy

from queues.config.settings import get_config
from queues.reads.counts import QueueSummary
from queues.reads.dead_letters import is_dead_letter_queue
from queues.reads.keys import STATES

# The state columns, in the overview's order (a BullMQ 5 ``paused`` list has no column).
COLUMNS = tuple(state for state in STATES if state != "paused")
SORTS = ("name", *COLUMNS)
# How queues are grouped: not at all, by what comes before the first delimiter in the name
# (``t0042-mail`` under ``t0042``), by what follows the last one (under ``mail``), by prefix,
# by the Redis connection the queue is on.
GROUPINGS = ("", "head", "tail", "prefix", "connection")
# What the grouping menu says; "{d}" is the delimiter.
GROUPING_LABELS = (
    ("", gettext_lazy("No groups")),
    ("head", gettext_lazy("Group by the part before “{d}”")),
    ("tail", gettext_lazy("Group by the part after “{d}”")),
    ("prefix", gettext_lazy("Group by key prefix")),
    ("connection", gettext_lazy("Group by Redis connection")),
)
# What the order menu offers (the column headings offer the rest).
SORT_CHOICES = (
    ("name", gettext_lazy("Name A to Z")),
    ("-name", gettext_lazy("Name Z to A")),
    ("-failed", gettext_lazy("Most failed")),
    ("-waiting", gettext_lazy("Most waiting")),
    ("-active", gettext_lazy("Most active")),
    ("-delayed", gettext_lazy("Most delayed")),
    ("-completed", gettext_lazy("Most completed")),
)
PER_PAGE_CHOICES = (25, 50, 100, 200, 500)
# Optional columns from the queues' history: the last hour's p95 wait, the oldest waiting job.
HISTORY_COLUMNS = (
    ("wait_p95", gettext_lazy("p95 wait")),
    ("oldest", gettext_lazy("Oldest waiting")),
)
DEFAULT_PER_PAGE = 100
# Queues a group lists when opened; the rest are one filtered page away.
GROUP_MEMBERS_SHOWN = 100


@dataclass(frozen=True)
class ListQuery:
    text: str = ""
    problems: bool = False
    group: str = ""
    # Only the queues of this one group (with ``group``): an opened group, or its "show all".
    within: str | None = None
    sort: str = "name"  # a SORTS entry; "-" in front: the other way round
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    delimiter: str = "-"
    # Optional columns shown after the states (``HISTORY_COLUMNS``), in their order.
    columns: tuple[str, ...] = ()

    def params(self, **changes: Any) -> str:
        """This query as a query string (without its defaults), with ``changes`` made."""
        chosen = replace(self, **changes)
        pairs: list[tuple[str, Any]] = [
            ("q", chosen.text),
            ("problems", "1" if chosen.problems else ""),
            ("group", chosen.group),
            ("sort", "" if chosen.sort == "name" else chosen.sort),
            ("page", "" if chosen.page == 1 else chosen.page),
            ("per_page", "" if chosen.per_page == DEFAULT_PER_PAGE else chosen.per_page),
        ]
        if chosen.delimiter != get_config()["GROUP_DELIMITER"]:
            pairs.append(("delimiter", chosen.delimiter))
        if chosen.columns:
            pairs.append(("columns", ",".join(chosen.columns)))
        if chosen.within is not None:
            pairs.append(("within", chosen.within))
        return urlencode([(k, v) for k, v in pairs if v != "" or k == "within"])

    def sorted_by(self, key: str) -> str:
        """The query string of a column heading: by ``key``, the other way round when it is
        the order already (counts start with the most, names with A)."""
        if self.sort_key == key:
            return self.params(sort=key if self.descending else f"-{key}", page=1)
        return self.params(sort=key if key == "name" else f"-{key}", page=1)

    @property
    def sort_key(self) -> str:
        return self.sort.lstrip("-")

    @property
    def descending(self) -> bool:
        return self.sort.startswith("-")


@dataclass
class Group:
    key: str
    counts: dict[str, int]
    queues: int  # all its queues
    matching: int  # those the filter lets through
    paused: int
    problems: int

    def as_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "counts": self.counts,
            "queues": self.queues,
            "matching": self.matching,
            "paused": self.paused,
            "problems": self.problems,
        }


@dataclass
class Listing:
    query: ListQuery
    queues: list[dict[str, Any]]  # this page's queues (ungrouped, or one group's)
    groups: list[Group]  # this page's groups (grouped and not ``within``)
    total: int  # every queue there is
    matching: int  # queues the filter lets through
    pages: int
    totals: dict[str, int] = field(default_factory=dict)  # over every queue
    # Connections that could not be read, and why: their queues are not listed...
    unreachable: dict[str, str] = field(default_factory=dict)
    # ...unless the live reader vouched for their counts a moment before (a read failed while
    # this list was made from them): those are listed with the counts last read.
    listed_anyway: frozenset[str] = frozenset()
    # Queues that could not be read while their connection could (a Redis Cluster master is
    # down), as the API names them, with why: they are not listed either.
    unreachable_queues: list[dict[str, str]] = field(default_factory=list)
    # The version of the live readers' counts the list shows, which its page's socket resumes
    # from ("" when some were read from Redis: the socket then sends every count).
    live_version: str = ""

    @property
    def page(self) -> int:
        return min(self.query.page, self.pages)


def queue_problems(queue: dict[str, Any]) -> list[str]:
    """Why an on-call person should look at this queue, in words; empty when nothing is wrong."""
    found = [_alert_problem(alert) for alert in queue.get("alerts", ())]
    counts = queue["counts"]
    if counts.get("failed"):
        found.append("failed jobs")
    if queue.get("stuck"):
        found.append("stuck jobs")
    if queue.get("paused"):
        found.append("paused")
    backlog = counts.get("waiting", 0) + counts.get("prioritized", 0) + counts.get("paused", 0)
    if (
        queue.get("workers") == 0
        and backlog
        and not queue.get("paused")
        and not is_dead_letter_queue(queue["slug"])
    ):
        found.append("jobs wait and no worker is connected")
    if queue.get("problems"):
        found.append("unreadable keys")
    return found


def _alert_problem(alert: dict[str, Any]) -> str:
    # A held alert still needs a look (it fires), but says who holds it back.
    held = alert.get("status") in ("acknowledged", "silenced")
    return f"alert: {alert['rule']} ({alert['status']})" if held else f"alert: {alert['rule']}"


def alert_row_class(queue: dict[str, Any]) -> str:
    """How loud a row is: ``alerting`` with an alert nobody holds, ``alert-held`` when every
    alert firing on it is acknowledged or silenced, nothing without alerts."""
    alerts = queue.get("alerts") or ()
    if not alerts:
        return ""
    held = all(alert.get("status") in ("acknowledged", "silenced") for alert in alerts)
    return "alert-held" if held else "alerting"


def group_key(queue: dict[str, Any], grouping: str, delimiter: str) -> str:
    name = str(queue["name"])
    if grouping == "prefix":
        return str(queue["prefix"])
    if grouping == "connection":
        return str(queue.get("connection", ""))
    if grouping == "head":
        return name.split(delimiter, 1)[0] if delimiter else name
    if grouping == "tail":
        return name.rsplit(delimiter, 1)[-1] if delimiter else name
    return ""


@dataclass
class Groups:
    """One grouping of a list of queues: each queue's key (by its place in the list), each
    group's places (in the list's order), counts summed over them (``COLUMNS``' order) and
    paused queues."""

    keys: list[str]
    members: dict[str, list[int]]
    sums: dict[str, list[int]]
    paused: dict[str, int]


def groups_of(
    summaries: Sequence[QueueSummary], shown: Sequence[Sequence[int]], grouping: str, delimiter: str
) -> Groups:
    """``summaries`` grouped; ``shown``: each one's counts in ``COLUMNS``' order."""
    keys = [
        group_key(
            {"name": s.ref.name, "prefix": s.ref.prefix, "connection": s.ref.connection},
            grouping,
            delimiter,
        )
        for s in summaries
    ]
    made = Groups(keys, {}, {}, {})
    for p, key in enumerate(keys):
        made.members.setdefault(key, []).append(p)
        sums = made.sums.setdefault(key, [0] * len(COLUMNS))
        for column, n in enumerate(shown[p]):
            sums[column] += n
        made.paused[key] = made.paused.get(key, 0) + bool(summaries[p].paused)
    return made


def _matches(queue: dict[str, Any], needle: str) -> bool:
    if not needle:
        return True
    return any(
        needle in str(queue.get(field_name) or "").casefold()
        for field_name in ("name", "displayName", "slug")
    )


def _shown_counts(queue: dict[str, Any]) -> dict[str, int]:
    counts = queue["counts"]
    return {state: int(counts.get(state, 0)) for state in COLUMNS}


def in_order(items: list[Any], query: ListQuery, name: Any, counts: Any) -> list[Any]:
    key = query.sort_key
    if key == "name":
        return sorted(items, key=lambda item: name(item).casefold(), reverse=query.descending)
    # Equal counts keep the name order, whichever way the counts go.
    by_name = sorted(items, key=lambda item: name(item).casefold())
    return sorted(by_name, key=lambda item: counts(item).get(key, 0), reverse=query.descending)


def totals_of(queues: Iterable[dict[str, Any]]) -> dict[str, int]:
    summed = dict.fromkeys(COLUMNS, 0)
    for queue in queues:
        shown = queue.get("shownCounts") or _shown_counts(queue)
        for state in COLUMNS:
            summed[state] += shown[state]
    return summed


def page_count(count: int, per_page: int) -> int:
    return max(1, math.ceil(count / per_page))


def page_of(items: Sequence[Any], page: int, per_page: int) -> list[Any]:
    page = min(page, page_count(len(items), per_page))
    return list(items[(page - 1) * per_page : page * per_page])


def list_queues(queues: list[dict[str, Any]], query: ListQuery) -> Listing:
    needle = query.text.strip().casefold()
    for queue in queues:
        queue["shownCounts"] = _shown_counts(queue)
        queue["attention"] = queue_problems(queue)
    totals = totals_of(queues)
    wanted = queues
    if needle or query.problems:  # else no call a queue (50,000 of them)
        wanted = [
            q for q in queues if _matches(q, needle) and (not query.problems or q["attention"])
        ]

    def display(queue: dict[str, Any]) -> str:
        return str(queue.get("displayName") or queue["name"])

    def shown(queue: dict[str, Any]) -> dict[str, int]:
        return queue["shownCounts"]  # type: ignore[no-any-return]

    if not query.group or query.within is not None:
        if query.group:
            wanted = [
                q for q in wanted if group_key(q, query.group, query.delimiter) == query.within
            ]
        ordered = in_order(wanted, query, display, shown)
        pages = page_count(len(ordered), query.per_page)
        rows = page_of(ordered, query.page, query.per_page)
        return Listing(query, rows, [], len(queues), len(wanted), pages, totals)

    # Grouped: a group is listed when one of its queues passes the filter; its counts are
    # those of all its queues, so that they match what opening it shows without a filter.
    members: dict[str, list[dict[str, Any]]] = {}
    for queue in queues:
        members.setdefault(group_key(queue, query.group, query.delimiter), []).append(queue)
    passing: dict[str, int] = {}
    for queue in wanted:
        key = group_key(queue, query.group, query.delimiter)
        passing[key] = passing.get(key, 0) + 1
    groups = [
        Group(
            key=key,
            counts=totals_of(members[key]),
            queues=len(members[key]),
            matching=passing[key],
            paused=sum(1 for q in members[key] if q.get("paused")),
            problems=sum(1 for q in members[key] if q["attention"]),
        )
        for key in passing
    ]
    ordered_groups = in_order(groups, query, lambda g: g.key, lambda g: g.counts)
    pages = page_count(len(ordered_groups), query.per_page)
    return Listing(
        query, [], page_of(ordered_groups, query.page, query.per_page), len(queues), len(wanted),
        pages, totals,
    )  # fmt: skip


def group_members(
    queues: list[dict[str, Any]], grouping: str, delimiter: str, key: str
) -> list[dict[str, Any]]:
    """Every queue of one group (group actions act on all of them, whatever the filter)."""
    return [q for q in queues if group_key(q, grouping, delimiter) == key]
