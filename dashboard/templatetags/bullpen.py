"""``{% load bullpen %}``: the tags and filters every page uses, gathered from the helper
libraries that each own one kind (times, JSON, figures, a job's facts, names, the page's frame).
The names stay importable from here for code that imported them before the split."""

from __future__ import annotations

from django import template

from dashboard.templatetags import (
    bullpen_figures,
    bullpen_jobs,
    bullpen_json,
    bullpen_names,
    bullpen_page,
    bullpen_times,
)
from dashboard.templatetags.bullpen_figures import (
    percent_text,
    percent_value,
    progress_percent,
    spark,
    trend_spark,
)
from dashboard.templatetags.bullpen_jobs import (
    attempts_used,
    audit_summary,
    dead_letter,
    due_at,
    is_dead_letter_queue,
    job_url,
    succeeded_on,
)
from dashboard.templatetags.bullpen_json import compact_json, get_item, is_structured, json_tree
from dashboard.templatetags.bullpen_names import (
    alert_label,
    alert_text,
    hold_text,
    visible,
    visible_text,
)
from dashboard.templatetags.bullpen_page import (
    bullpen_connections,
    bullpen_notices,
    bullpen_sign_out,
    bullpen_tab_states,
    bullpen_ws_connect,
    bullpen_ws_path,
    favicon_href,
)
from dashboard.templatetags.bullpen_times import (
    duration,
    job_duration,
    relative,
    seconds_span,
    timestamp,
)

__all__ = [
    "alert_label",
    "alert_text",
    "attempts_used",
    "audit_summary",
    "bullpen_connections",
    "bullpen_notices",
    "bullpen_sign_out",
    "bullpen_tab_states",
    "bullpen_ws_connect",
    "bullpen_ws_path",
    "compact_json",
    "dead_letter",
    "due_at",
    "duration",
    "favicon_href",
    "get_item",
    "hold_text",
    "is_dead_letter_queue",
    "is_structured",
    "job_duration",
    "job_url",
    "json_tree",
    "percent_text",
    "percent_value",
    "progress_percent",
    "relative",
    "seconds_span",
    "spark",
    "succeeded_on",
    "timestamp",
    "trend_spark",
    "visible",
    "visible_text",
]

register = template.Library()

for _library in (
    bullpen_times.register,
    bullpen_json.register,
    bullpen_figures.register,
    bullpen_jobs.register,
    bullpen_names.register,
    bullpen_page.register,
):
    register.tags.update(_library.tags)
    register.filters.update(_library.filters)
