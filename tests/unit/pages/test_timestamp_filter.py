"""The `timestamp` filter: a `<time>` for a moment, a muted placeholder for anything else."""

from __future__ import annotations

import pytest
from django.test import SimpleTestCase

from dashboard.templatetags.bullpen import timestamp


def test_a_moment_becomes_a_time_element_with_absolute_and_relative_text() -> None:
    html = timestamp(1796051267087)
    SimpleTestCase().assertInHTML(
        '<span class="abs">2026-11-30 15:07:47.087 UTC</span>', html, count=1
    )
    assert html.startswith(
        '<time datetime="2026-11-30T15:07:47.087000+00:00" data-ms="1796051267087"'
        ' title="2026-11-30 15:07:47.087 UTC">'
    )
    assert '<span class="rel">' in html and html.endswith("</span></time>")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "—"),
        ("", "—"),
        ("<b>soon</b>", "&lt;b&gt;soon&lt;/b&gt;"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (10**20, str(10**20)),
        (True, "True"),
        (-5, "-5"),
    ],
)
def test_anything_but_a_moment_is_shown_muted_and_escaped(value: object, shown: str) -> None:
    assert timestamp(value) == f'<span class="muted">{shown}</span>'
