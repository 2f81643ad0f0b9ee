"""The overview's links: column headings that sort, pages, and the grouping menu's words."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Container
from typing import Any

from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.formats import number_format
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, ngettext

from dashboard.pages.overview_list import ListQuery
from dashboard.pages.overview_list import alert_row_class as _alert_row_class
from dashboard.pages.state_labels import state_label
from dashboard.templatetags.bullpen_names import visible_text

register = template.Library()


@register.filter
def alert_row_class(queue: dict[str, Any]) -> str:
    """``alerting`` (an alert nobody holds), ``alert-held`` (all held) or nothing."""
    return _alert_row_class(queue)


@register.simple_tag
def query_params(query: ListQuery, **changes: Any) -> str:
    """``query``'s query string with ``changes`` (``within=None``: leave the group)."""
    return query.params(**changes)


@register.simple_tag
def sort_link(query: ListQuery, key: str, label: str) -> SafeString:
    """A column heading that orders the list by it; it says which way it orders now."""
    params = query.sorted_by(key)
    if query.sort_key != key:
        return format_html(
            '<a href="?{}" hx-get="?{}" hx-target="#overview-list" hx-swap="outerHTML" '
            'hx-push-url="true" data-sort="{}">{}</a>',
            params, params, key, label,
        )  # fmt: skip
    way = gettext("sorted descending") if query.descending else gettext("sorted ascending")
    arrow = "▼" if query.descending else "▲"
    return format_html(
        '<a href="?{}" hx-get="?{}" hx-target="#overview-list" hx-swap="outerHTML" '
        'hx-push-url="true" data-sort="{}" class="sorted">{} <span aria-hidden="true">{}</span>'
        '<span class="visually-hidden">, {}</span></a>',
        params, params, key, label, arrow, way,
    )  # fmt: skip


@register.filter
def fill_delimiter(label: str, delimiter: str) -> str:
    return label.replace("{d}", delimiter)


@functools.lru_cache(maxsize=65_536)
def part_id(kind: str, key: str) -> str:
    """A stable element id for a queue's or a group's live part: names are untrusted and may
    hold anything, so the id is a digest of the name, valid in any CSS selector."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
    return f"{kind}{digest}"


@register.filter
def row_part(slug: str) -> str:
    """The id of a queue's row parts on the overview (its count cells, its pause badge)."""
    return part_id("q", str(slug))


@register.filter
def group_part(key: str) -> str:
    """The id of a group's figures on the overview."""
    return part_id("g", str(key))


# A queue's count cell, the same for the page and its live updates.
_CELL = (
    '<td id="{row}-{state}" class="num state-{state}{zero}{flash}" data-state="{state}" '
    'data-state-label="{label}"><a href="{url}?state={state}" aria-label="{says}">{number}</a></td>'
)


@register.simple_tag
def state_cells(
    queue: dict[str, Any], queue_url: str, states: tuple[str, ...], changed: Container[str] = ()
) -> SafeString:
    """A queue's count cells, each linking to that state's tab (a hundred rows of eight: built
    here rather than by a template loop, which costs the overview most of its render time).
    Each link's name stands alone ("14 failed jobs in documents"). The overview's live
    updates render the cells of a queue whose counts moved with this same tag (ids
    ``row_part-state``); ``changed``: the states whose number moved, which flash. Every part
    is escaped as ``format_html`` would; the words of a state and of a number are looked up
    once per language, not once a cell."""
    counts = queue["counts"]
    name = visible_text(queue["displayName"])
    row = escape(row_part(queue.get("slug", "")))
    url = conditional_escape(queue_url)
    language = get_language()
    cells = []
    for state in states:
        count = counts.get(state, 0)
        key, label, spoken = _state_words(language, state)
        number, words = _count_words(language, count)
        says = escape(words.format(n=count, state=spoken, queue=name))
        zero = "" if count else " zero"
        flash = " flash" if state in changed else ""
        cells.append(
            _CELL.format(
                row=row,
                state=key,
                zero=zero,
                flash=flash,
                label=label,
                url=url,
                says=says,
                number=number,
            )
        )
    return mark_safe("\n      ".join(cells))  # noqa: S308 - every part escaped above


def count_label(count: int, state: str, queue_name: str) -> str:
    """What a count link says to a screen reader."""
    words = _count_words(get_language(), count)[1]
    return words.format(n=count, state=_state_words(get_language(), state)[2], queue=queue_name)


@functools.lru_cache(maxsize=256)
def _state_words(language: str | None, state: str) -> tuple[str, str, str]:
    """A state's key escaped, its label escaped, and its name as a sentence says it, in the
    active ``language`` (the catalogs stay while the process runs)."""
    label = state_label(state)
    return escape(state), escape(label), label.replace("-", " ")


@functools.lru_cache(maxsize=4096)
def _count_words(language: str | None, count: int) -> tuple[str, str]:
    """``count`` as the page writes it (escaped), and the sentence its plural takes, in the
    active ``language``."""
    words = ngettext("{n} {state} job in {queue}", "{n} {state} jobs in {queue}", count)
    return escape(number_format(count, force_grouping=True)), words


@receiver(setting_changed)
def _forget_words(**_kwargs: Any) -> None:
    # A test's other number format or language settings: the words are looked up again.
    _state_words.cache_clear()
    _count_words.cache_clear()
