"""Reading rendered pages as parsed HTML: elements are found by tag and attributes in any order
(``django.test.html.parse_html``), so a test does not depend on how a template orders them."""

from __future__ import annotations

from collections.abc import Iterator

from django.test import SimpleTestCase
from django.test.html import Element, parse_html

_ASSERTS = SimpleTestCase()


def assert_in_html(needle: str, haystack: str | Element, count: int | None = None) -> None:
    """``needle`` (a fragment) occurs in ``haystack`` as parsed HTML: attribute order, quoting
    and whitespace do not matter."""
    _ASSERTS.assertInHTML(needle, str(haystack), count=count)


def elements(html: str | Element, tag: str, **attrs: str | None) -> list[Element]:
    """Every ``tag`` element with these attributes (``data_job_id`` for ``data-job-id``,
    ``class_`` for ``class``; a value of None asks only that the attribute be there), in
    document order."""
    root = parse_html(html) if isinstance(html, str) else html
    wanted = {name.rstrip("_").replace("_", "-"): value for name, value in attrs.items()}
    return [
        element
        for element in _walk(root)
        if element.name == tag and _has(dict(element.attributes), wanted)
    ]


def element(html: str | Element, tag: str, **attrs: str | None) -> Element:
    """The one element matching, as :func:`elements` finds it."""
    found = elements(html, tag, **attrs)
    assert len(found) == 1, f"{len(found)} <{tag}> with {attrs} in {str(html)[:300]}"
    return found[0]


def attribute(node: Element, name: str) -> str | None:
    return dict(node.attributes).get(name)


def has_attribute(node: Element, name: str) -> bool:
    """Whether the attribute is there, a value-less one (``hidden``) included."""
    return any(key == name for key, _ in node.attributes)


def text(node: Element | str) -> str:
    """The text inside an element, tags left out (whitespace as the parser normalised it)."""
    if isinstance(node, str):
        return node
    return "".join(text(child) for child in node.children)


def _walk(node: Element) -> Iterator[Element]:
    for child in node.children:
        if isinstance(child, Element):
            yield child
            yield from _walk(child)


def _has(attributes: dict[str, str | None], wanted: dict[str, str | None]) -> bool:
    for name, value in wanted.items():
        if name not in attributes:
            return False
        if value is not None and attributes[name] != value:
            return False
    return True
