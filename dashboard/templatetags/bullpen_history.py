"""The history charts' repeated SVG parts (a line's segments, a hover area per step), written
here rather than by template loops: a day by the minute is thousands of elements, which a
template loop renders about ten times slower. Every text is escaped."""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from dashboard.history.charts import Chart

register = template.Library()


@register.simple_tag
def chart_lines(chart: Chart) -> SafeString:
    parts = []
    for line in chart.lines:
        parts.append(f'<g class="series {escape(line.key)}" aria-hidden="true">')
        for segment in line.segments:
            if segment.single:
                parts.append(f'<circle cx="{segment.x}" cy="{segment.y}" r="2"/>')
            else:
                parts.append(f'<polyline points="{segment.points}"/>')
        parts.append("</g>")
    return mark_safe("".join(parts))  # noqa: S308 - numbers, and keys escaped above


@register.simple_tag
def chart_hovers(chart: Chart) -> SafeString:
    height = chart.plot_height
    return mark_safe(  # noqa: S308 - numbers, and each title escaped
        "".join(
            f'<rect x="{hover.x}" y="{chart.top}" width="{hover.width}" height="{height}">'
            f"<title>{escape(hover.title)}</title></rect>"
            for hover in chart.hovers
        )
    )
