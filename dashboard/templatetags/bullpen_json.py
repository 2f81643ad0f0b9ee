"""Template helpers for JSON values: compact text and the collapsible tree, all escaped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext

if TYPE_CHECKING:
    pass

register = template.Library()

_MAX_DEPTH = 40
_MAX_CHILDREN = 500


@register.filter
def compact_json(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


def _scalar(value: Any) -> SafeString:
    kind = (
        "null"
        if value is None
        else "bool"
        if isinstance(value, bool)
        else "num"
        if isinstance(value, (int, float))
        else "str"
    )
    return format_html('<span class="j-{}">{}</span>', kind, json.dumps(value, ensure_ascii=False))


def _tree(value: Any, depth: int) -> SafeString:
    if not isinstance(value, (dict, list)) or not value:
        if isinstance(value, (dict, list)):
            return mark_safe("{}" if isinstance(value, dict) else "[]")  # noqa: S308 - constants
        return _scalar(value)
    if depth >= _MAX_DEPTH:
        return _scalar(json.dumps(value, ensure_ascii=False)[:2000])
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    shown = items[:_MAX_CHILDREN]
    rows = format_html_join(
        "",
        "<li>{}{}</li>",
        (
            (
                format_html('<span class="j-key">{}</span>: ', key)
                if isinstance(value, dict)
                else format_html('<span class="j-idx">{}</span>: ', key),
                _tree(child, depth + 1),
            )
            for key, child in shown
        ),
    )
    more = (
        format_html(
            '<li class="muted">{}</li>',
            gettext("… %(n)s more") % {"n": len(items) - len(shown)},
        )
        if len(items) > len(shown)
        else ""
    )
    if isinstance(value, dict):
        size = ngettext("%(n)s key", "%(n)s keys", len(items)) % {"n": len(items)}
    else:
        size = ngettext("%(n)s item", "%(n)s items", len(items)) % {"n": len(items)}
    brackets = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return format_html(
        '<details class="j-node"{}><summary>{} <span class="muted">{}</span></summary>'
        "<ul>{}{}</ul>{}</details>",
        mark_safe(" open") if depth < 2 else "",
        brackets[0],
        size,
        rows,
        more,
        brackets[1],
    )


@register.filter
def json_tree(value: Any) -> SafeString:
    """Collapsible JSON: nested ``<details>``; every key and value is escaped."""
    return format_html('<div class="json-tree">{}</div>', _tree(value, 0))


@register.filter
def is_structured(value: Any) -> bool:
    return isinstance(value, (dict, list))
