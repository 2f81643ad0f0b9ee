"""Language helpers for the pages: state names, grouped numbers, the language switcher, and the
few words the page scripts write themselves."""

from __future__ import annotations

import functools
import json
from typing import Any

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.formats import number_format
from django.utils.translation import get_language, gettext, pgettext

from dashboard.pages import state_labels
from queues.config.settings import get_config

register = template.Library()


@register.filter
def state_label(state: Any) -> str:
    """A job state's name in the page's language (the key stays for URLs and attributes)."""
    return state_labels.state_label(str(state))


@register.filter
def states_and(states: Any) -> str:
    """States in the page's language joined by "and": "failed and completed"."""
    return state_labels.state_list([str(state) for state in states], "and")


@register.filter
def states_or(states: Any) -> str:
    """States in the page's language joined by "or": "failed or completed"."""
    return state_labels.state_list([str(state) for state in states], "or")


@register.filter
def state_counts(by_state: Any) -> str:
    """(state, count) pairs as "3 failed, 1 completed" in the page's language."""
    return state_labels.state_counts((str(state), int(n)) for state, n in by_state)


@register.filter
def count(value: Any) -> str:
    """A whole number grouped as the page's language writes it: 12,345 / 12.345 / 12 345."""
    if not isinstance(value, int) or isinstance(value, bool):
        return "" if value is None else str(value)
    return number_format(value, force_grouping=True)


@register.simple_tag
def language_switch_url() -> str:
    """Where the language switcher posts: Django's ``set_language`` when the site routes it
    (and ``BULLPEN["LANGUAGE_SWITCHER"]`` is not False). A host site without it keeps its own
    way of choosing and shows no switcher."""
    if not get_config()["LANGUAGE_SWITCHER"]:
        return ""
    try:
        return reverse("set_language")
    except NoReverseMatch:
        return ""


def script_text() -> dict[str, str]:
    """The words the page scripts show, in the page's language; the script fills in the names
    in braces (``{n}``, ``{unit}``)."""
    return {
        "searching": gettext("searching…"),
        "search_cancelled": pgettext("search", "cancelled"),
        "search_failed_status": gettext("search failed ({status})"),
        "working": gettext("Working…"),
        "failed_status": gettext("Failed ({status})"),
        "ago": gettext("{n} {unit} ago"),
        "in": gettext("in {n} {unit}"),
        "d": pgettext("time unit", "d"),
        "h": pgettext("time unit", "h"),
        "min": pgettext("time unit", "min"),
        "s": pgettext("time unit", "s"),
        "connecting": gettext("connecting…"),
        "reconnecting": gettext("reconnecting…"),
        "live": gettext("live"),
        "stale": gettext("stale"),
        "redis_down": gettext("Redis unreachable"),
        "redis_down_detail": gettext("Redis unreachable: {detail}"),
        "connections_down": gettext("live · {names} unreachable"),
        "live_updates": gettext("Live updates"),
        "connection_lost": gettext("Connection to the server lost: the figures may be out of date"),
        "silent": gettext("No live update for {n} s: the figures may be out of date"),
        "signed_out": gettext("signed out"),
        "copied": gettext("Copied"),
        "copy_json": gettext("Copy as JSON"),
        "prefs_forgotten": gettext("Preferences forgotten"),
        "search_failed": gettext("search failed: {error}"),
    }


@register.simple_tag
def bullpen_script_text() -> str:
    """:func:`script_text` as JSON for a ``data-`` attribute (the template escapes it)."""
    return _script_json(get_language())


@functools.lru_cache(maxsize=16)
def _script_json(language: str | None) -> str:
    # Catalogs do not change while the server runs: built once per language.
    return json.dumps(script_text(), ensure_ascii=False)
