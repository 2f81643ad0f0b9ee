"""A queue's history as chart geometry: every coordinate, tick and hover text the templates
draw as inline SVG, computed here so that no number is rendered twice (nor in JavaScript).

Points sit at their own time on an axis that ends at the newest step; two points are joined
only when they are one step apart, so a span with no record is a gap, not a slope. A
percentile without a value (no job of that step was measured) is a gap in its line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.utils.formats import date_format, number_format
from django.utils.timezone import localtime
from django.utils.translation import get_language, gettext, gettext_lazy

from dashboard.history.lines import Segment, steps_per_column, thinned
from dashboard.history.scales import (
    Scale,
    count_scale,
    duration_scale,
    duration_text,
    percent_scale,
    percent_text,
)
from queues.history.model import HistoryPoint, HistorySeries, Percentiles

WIDTH = 720
HEIGHT = 180
LEFT, RIGHT, TOP, BOTTOM = 76, 12, 10, 36
PLOT_W = WIDTH - LEFT - RIGHT
PLOT_H = HEIGHT - TOP - BOTTOM
# Hover areas per chart at most: a day by the minute is shown in columns of several minutes.
MAX_HOVERS = 240
# Columns per line at most (each its lowest and highest step): about two pixels each.
MAX_LINE_COLUMNS = 320
# The span each range covers, in seconds.
RANGE_SPANS = {
    "1h": 3600,
    "6h": 6 * 3600,
    "24h": 86400,
    "7d": 7 * 86400,
    "30d": 30 * 86400,
    "90d": 90 * 86400,
}
# Time-axis tick intervals in seconds, smallest first; the first giving at most MAX_TIME_TICKS.
TIME_INTERVALS = (600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600)
MAX_TIME_TICKS = 7
PER_STEP = {
    60: gettext_lazy("Jobs per minute"),
    3600: gettext_lazy("Jobs per hour"),
    86400: gettext_lazy("Jobs per day"),
}


@dataclass(frozen=True)
class Tick:
    pos: float  # x or y in the SVG's coordinates
    label: str


@dataclass(frozen=True)
class Line:
    key: str  # the CSS class: done, failed, rate, p50, p95, p99
    label: str
    segments: list[Segment]


@dataclass(frozen=True)
class Hover:
    x: float
    width: float
    title: str


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    summary: str  # what the chart says, for screen readers
    y_ticks: list[Tick]
    x_ticks: list[Tick]
    lines: list[Line]
    hovers: list[Hover]
    empty: bool
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM

    @property
    def center(self) -> int:
        return (self.left + self.right) // 2

    @property
    def plot_height(self) -> int:
        return self.bottom - self.top


@dataclass(frozen=True)
class Axis:
    """The time axis of one series: its first and last step (ms) and the step."""

    start: int
    end: int
    step_ms: int

    @classmethod
    def of(cls, series: HistorySeries, now_ms: int) -> Axis:
        step_ms = series.step_s * 1000
        span_ms = RANGE_SPANS.get(series.range, series.step_s * len(series.points)) * 1000
        end = (now_ms // step_ms) * step_ms
        if series.points:
            end = max(end, max(p.t for p in series.points))
        steps = max(1, span_ms // step_ms)
        return cls(end - (steps - 1) * step_ms, end, step_ms)

    @property
    def steps(self) -> int:
        return (self.end - self.start) // self.step_ms + 1

    def x(self, t: int) -> float:
        if self.end == self.start:
            return LEFT + PLOT_W / 2
        return LEFT + (t - self.start) / (self.end - self.start) * PLOT_W

    def index(self, t: int) -> int:
        return (t - self.start) // self.step_ms


def y_of(value: float, scale: Scale) -> float:
    top = scale.top or 1.0
    return TOP + PLOT_H - min(value, top) / top * PLOT_H


def _when(ms: int, fmt: str) -> str:
    """A step's time as ``fmt`` says; the clock part by strftime and the date part once a
    day (date_format, which localises month names, costs too much for a day of minutes)."""
    moment = localtime(datetime.fromtimestamp(ms / 1000, tz=UTC))
    clock = moment.strftime("%H:%M")
    if fmt == "H:i":
        return clock
    day = _day(moment.date().toordinal(), moment)
    return day if fmt == "j M" else f"{day} {clock}"


_DAYS: dict[tuple[int, str], str] = {}


def _day(ordinal: int, moment: datetime) -> str:
    key = (ordinal, get_language() or "")
    if key not in _DAYS:
        if len(_DAYS) > 4096:
            _DAYS.clear()
        _DAYS[key] = date_format(moment, "j M")
    return _DAYS[key]


def step_format(axis: Axis) -> str:
    """How a hover names a step: its time, its date and time, or its date."""
    if axis.step_ms >= 86_400_000:
        return "j M"
    if (axis.end - axis.start) < 86_400_000:
        return "H:i"
    return "j M H:i"


def time_ticks(axis: Axis) -> list[Tick]:
    span_s = max(1, (axis.end - axis.start) // 1000)
    interval = next((i for i in TIME_INTERVALS if span_s / i <= MAX_TIME_TICKS), TIME_INTERVALS[-1])
    fmt = "H:i" if interval < 86400 else "j M"
    every = interval * 1000
    first = -(-axis.start // every) * every
    return [Tick(axis.x(t), _when(t, fmt)) for t in range(first, axis.end + 1, every)]


def _segments(
    axis: Axis,
    points: Sequence[HistoryPoint],
    value: Callable[[HistoryPoint], float | None],
    scale: Scale,
) -> list[Segment]:
    runs: list[list[tuple[int, float]]] = []
    last_index: int | None = None
    for point in points:
        found = value(point)
        if found is None or not math.isfinite(found):
            last_index = None
            continue
        index = axis.index(point.t)
        if last_index is not None and index == last_index + 1:
            runs[-1].append((point.t, found))
        else:
            runs.append([(point.t, found)])
        last_index = index
    per = steps_per_column(axis.steps, MAX_LINE_COLUMNS)
    drawn = [
        [(round(axis.x(t), 1), round(y_of(v, scale), 1)) for t, v in thinned(axis.index, run, per)]
        for run in runs
    ]
    return [
        Segment(" ".join(f"{x},{y}" for x, y in run), len(run) == 1, run[0][0], run[0][1])
        for run in drawn
    ]


def _rate(point: HistoryPoint) -> float | None:
    finished = point.completed + point.failed
    return point.failed / finished if finished else None


@dataclass(frozen=True)
class _Column:
    first: int  # the first step's time (ms)
    points: list[HistoryPoint]


def _columns(axis: Axis, points: Sequence[HistoryPoint]) -> tuple[int, list[_Column]]:
    per = max(1, math.ceil(axis.steps / MAX_HOVERS))
    columns: dict[int, _Column] = {}
    for point in points:
        slot = axis.index(point.t) // per
        column = columns.setdefault(slot, _Column(axis.start + slot * per * axis.step_ms, []))
        column.points.append(point)
    return per, [columns[k] for k in sorted(columns)]


def _hovers(
    axis: Axis, points: Sequence[HistoryPoint], describe: Callable[[list[HistoryPoint]], str]
) -> list[Hover]:
    per, columns = _columns(axis, points)
    fmt = step_format(axis)
    width = PLOT_W / axis.steps * per if axis.steps > 1 else PLOT_W
    found = []
    for column in columns:
        when = _when(column.first, fmt)
        if per > 1:
            when = f"{when}\u2013{_when(column.first + (per - 1) * axis.step_ms, fmt)}"
        x = axis.x(column.first) - (PLOT_W / axis.steps / 2 if axis.steps > 1 else PLOT_W / 2)
        left = max(float(LEFT), x)
        right = min(float(LEFT + PLOT_W), x + width)
        found.append(
            Hover(
                round(left, 1),
                round(max(0.5, right - left), 1),
                f"{when}: {describe(column.points)}",
            )
        )
    return found


def _count_text(points: list[HistoryPoint]) -> str:
    completed = sum(p.completed for p in points)
    failed = sum(p.failed for p in points)
    return gettext("%(completed)s completed, %(failed)s failed") % {
        "completed": number_format(completed, force_grouping=True),
        "failed": number_format(failed, force_grouping=True),
    }


def _rate_text(points: list[HistoryPoint]) -> str:
    completed = sum(p.completed for p in points)
    failed = sum(p.failed for p in points)
    if not completed + failed:
        return gettext("no job finished")
    return gettext("failure rate %(rate)s (%(failed)s of %(finished)s)") % {
        "rate": percent_text(failed / (completed + failed)),
        "failed": number_format(failed, force_grouping=True),
        "finished": number_format(completed + failed, force_grouping=True),
    }


def _peak(values: list[float | None]) -> float | None:
    found = [v for v in values if v is not None]
    return max(found) if found else None


def _latency_text(kind: str) -> Callable[[list[HistoryPoint]], str]:
    def describe(points: list[HistoryPoint]) -> str:
        parts = []
        for q in ("p50", "p95", "p99"):
            peak = _peak([getattr(getattr(p, kind), q) for p in points])
            if peak is not None:
                parts.append(f"{q} {duration_text(peak)}")
        if not parts:
            return gettext("not measured")
        text = ", ".join(parts)
        # A column of several steps shows each percentile's highest step.
        return gettext("at most %(values)s") % {"values": text} if len(points) > 1 else text

    return describe


def jobs_chart(series: HistorySeries, axis: Axis) -> Chart:
    points = series.points
    scale = count_scale(max([0, *(max(p.completed, p.failed) for p in points)]))
    title = str(PER_STEP.get(series.step_s, gettext_lazy("Jobs per step")))
    lines = [
        Line("done", gettext("completed"), _segments(axis, points, lambda p: p.completed, scale)),
        Line("failed", gettext("failed"), _segments(axis, points, lambda p: p.failed, scale)),
    ]
    summary = gettext("%(title)s: %(counts)s in all") % {
        "title": title,
        "counts": _count_text(list(points)),
    }
    return _chart("jobs", title, summary, scale, axis, lines, points, _count_text)


def rate_chart(series: HistorySeries, axis: Axis) -> Chart:
    points = series.points
    scale = percent_scale(max([0.0, *(r for p in points if (r := _rate(p)) is not None)]))
    title = gettext("Failure rate")
    lines = [Line("rate", gettext("failure rate"), _segments(axis, points, _rate, scale))]
    summary = f"{title}: {_rate_text(list(points))}"
    return _chart("rate", title, summary, scale, axis, lines, points, _rate_text)


def _percentile(kind: str, q: str) -> Callable[[HistoryPoint], float | None]:
    def value(point: HistoryPoint) -> float | None:
        found: float | None = getattr(getattr(point, kind), q)
        return found

    return value


def latency_chart(series: HistorySeries, axis: Axis, kind: str) -> Chart:
    points = series.points
    values = [getattr(getattr(p, kind), q) for p in points for q in ("p50", "p95", "p99")]
    scale = duration_scale(_peak(values) or 0.0)
    title = gettext("Wait time") if kind == "wait_ms" else gettext("Run time")
    lines = [
        Line(q, q, _segments(axis, points, _percentile(kind, q), scale))
        for q in ("p50", "p95", "p99")
    ]
    summary = _percentiles_text(getattr(series.totals, kind)) or gettext("not measured")
    return _chart(
        kind, title, f"{title}: {summary}", scale, axis, lines, points, _latency_text(kind)
    )


def _percentiles_text(found: Percentiles) -> str:
    values = (("p50", found.p50), ("p95", found.p95), ("p99", found.p99))
    return ", ".join(f"{q} {duration_text(v)}" for q, v in values if v is not None)


def _chart(
    key: str,
    title: str,
    summary: str,
    scale: Scale,
    axis: Axis,
    lines: list[Line],
    points: Sequence[HistoryPoint],
    describe: Callable[[list[HistoryPoint]], str],
) -> Chart:
    y_ticks = [
        Tick(round(y_of(v, scale), 1), label)
        for v, label in zip(scale.ticks, scale.labels, strict=True)
    ]
    return Chart(
        key=key,
        title=title,
        summary=summary,
        y_ticks=y_ticks,
        x_ticks=time_ticks(axis),
        lines=lines,
        hovers=_hovers(axis, points, describe),
        empty=not any(line.segments for line in lines),
    )


def history_charts(series: HistorySeries, now_ms: int) -> list[Chart]:
    """The four charts of a queue's history page, in the order shown."""
    points = sorted((p for p in series.points), key=lambda p: p.t)
    axis = Axis.of(series, now_ms)
    points = [p for p in points if axis.start <= p.t <= axis.end]
    shown = HistorySeries(
        series.queue, series.range, series.step_s, points, series.totals, series.oldest_waiting_ms
    )
    return [
        jobs_chart(shown, axis),
        rate_chart(shown, axis),
        latency_chart(shown, axis, "wait_ms"),
        latency_chart(shown, axis, "run_ms"),
    ]
