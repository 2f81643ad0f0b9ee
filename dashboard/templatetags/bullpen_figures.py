"""Template helpers for figures: progress, percentages and the inline sparklines."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, ngettext

from queues.failures.trends import Trend

if TYPE_CHECKING:
    pass

register = template.Library()


@register.filter
def progress_percent(progress: Any) -> float | None:
    """A number 0-100 from BullMQ progress: a number, or an object with a percentage in it."""
    value: Any = progress
    if isinstance(progress, dict):
        value = next(
            (progress[k] for k in ("percentage", "percent", "pct", "progress") if k in progress),
            None,
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return max(0.0, min(100.0, float(value)))


@register.simple_tag
def spark(
    points: list[dict[str, Any]], width: int = 120, height: int = 24, stretch: bool = False
) -> SafeString:
    """A tiny inline SVG of completed (green) and failed (red) per minute; the style sheet
    recolours the lines for the page's scheme. A minute not sampled (its counts None) is a
    shaded gap, never a zero. Quiet queues draw the same line: an overview of a hundred rows
    draws each different one once. ``stretch``: drawn to fill a box of another shape (the
    queue page's chart on a phone keeps its height)."""
    if not points:
        return mark_safe("")
    completed = tuple(p["completed"] for p in points)
    failed = tuple(p["failed"] for p in points)
    return _spark_svg(get_language(), completed, failed, width, height, stretch)


@functools.lru_cache(maxsize=1024)
def _spark_svg(
    language: str | None,
    completed: tuple[int | None, ...],
    failed: tuple[int | None, ...],
    width: int,
    height: int,
    stretch: bool,
) -> SafeString:
    top = max(1, max((n for n in (*completed, *failed) if n is not None), default=1))
    gaps = _gaps(completed, width)
    label = gettext("completed and failed per minute")
    if gaps:
        label = gettext("completed and failed per minute; shaded: minutes not sampled")
    return format_html(
        '<svg class="spark" width="{}" height="{}" viewBox="0 0 {} {}" role="img"{} '
        'aria-label="{}">{}'
        '<path class="done" fill="none" stroke="#1e7b34" stroke-width="1.2" d="{}"/>'
        '<path class="failed" fill="none" stroke="#b3261e" stroke-width="1.2" d="{}"/>'
        "</svg>",
        width,
        height,
        width,
        height,
        mark_safe(' preserveAspectRatio="none"' if stretch else ""),  # noqa: S308 - a constant
        label,
        mark_safe(  # noqa: S308 - numbers only
            "".join(
                f'<rect class="unsampled" x="{x:.1f}" width="{w:.1f}" height="{height}"/>'
                for x, w in gaps
            )
        ),
        _path(list(completed), top, width, height),
        _path(list(failed), top, width, height),
    )


@register.simple_tag
def trend_spark(trend: Trend | None, width: int = 96, height: int = 18) -> SafeString:
    """A failure group's last day, failures per quarter hour, as a small inline SVG."""
    if trend is None:
        return mark_safe("")
    points = trend.buckets()
    peak = max(points)
    top = max(1, peak)
    label = ngettext(
        "%(total)s failure in the last day, at most %(peak)s in a quarter hour",
        "%(total)s failures in the last day, at most %(peak)s in a quarter hour",
        trend.total,
    ) % {"total": trend.total, "peak": peak}
    return format_html(
        '<svg class="spark trend" width="{}" height="{}" viewBox="0 0 {} {}" role="img" '
        'aria-label="{}"><title>{}</title>'
        '<polyline class="failed" fill="none" stroke="#b3261e" stroke-width="1.2" points="{}"/>'
        "</svg>",
        width,
        height,
        width,
        height,
        label,
        label,
        _polyline(points, top, width, height),
    )


def _polyline(values: list[int], top: int, width: int, height: int) -> str:
    """An SVG polyline's points for ``values`` scaled to ``top``."""
    step = width / max(1, len(values) - 1)
    return " ".join(_points(values, 0, step, top, height))


def _points(values: list[int], first: int, step: float, top: int, height: int) -> list[str]:
    """The points of ``values``, the first at index ``first``. A point between two of the
    same height draws nothing: a quiet hour is 2 points, not 60 (the overview shows a hundred
    of these)."""
    ys = [f"{height - 1 - (n / top) * (height - 2):.1f}" for n in values]
    return [
        f"{(first + i) * step:.1f},{y}"
        for i, y in enumerate(ys)
        if i in (0, len(ys) - 1) or not ys[i - 1] == y == ys[i + 1]
    ]


def _runs(values: tuple[int | None, ...] | list[int | None], known: bool) -> list[range]:
    """The runs of consecutive indexes whose values are known (or, ``known`` False, None)."""
    runs: list[range] = []
    start = None
    for index, value in enumerate((*values, None if known else 0)):
        if (value is not None) == known:
            start = index if start is None else start
        elif start is not None:
            runs.append(range(start, index))
            start = None
    return runs


def _gaps(values: tuple[int | None, ...], width: int) -> list[tuple[float, float]]:
    """Each run of minutes not sampled as (x, width): half a step either side of its points."""
    step = width / max(1, len(values) - 1)
    spans = []
    for run in _runs(values, known=False):
        left = max(0.0, (run.start - 0.5) * step)
        right = min(float(width), (run.stop - 0.5) * step)
        spans.append((left, right - left))
    return spans


def _path(values: list[int | None], top: int, width: int, height: int) -> str:
    """An SVG path of ``values``: a stroke a run of sampled minutes (a lone minute a short
    dash), none across the gaps."""
    step = width / max(1, len(values) - 1)
    parts = []
    for run in _runs(values, known=True):
        known = [n for n in values[run.start : run.stop] if n is not None]
        points = _points(known, run.start, step, top, height)
        if len(points) == 1:
            x, y = (float(part) for part in points[0].split(","))
            points = [f"{max(0.0, x - 1):.1f},{y:.1f}", f"{min(width, x + 1):.1f},{y:.1f}"]
        parts.append("M" + "L".join(points))
    return "".join(parts)


def _plain_number(value: float, places: int) -> str:
    """A number with at most ``places`` decimals and no trailing zeros, as floatformat:-N
    writes it, without the locale lookups (this runs for every live progress update)."""
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@register.filter
def percent_value(value: float) -> str:
    return _plain_number(value, 2)


@register.filter
def percent_text(value: float) -> str:
    return f"{round(value):d}"


# Characters a name may hold that show as nothing or turn the text around: C0 and C1 controls,
# zero-width and direction marks, line and paragraph separators, bidi embeddings, overrides and
