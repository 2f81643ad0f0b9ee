"""List rows build job links without resolving the route per row: the same URL reverse() gives."""

from __future__ import annotations

import pytest
from django.urls import reverse

from dashboard.templatetags.bullpen import job_url, percent_text, percent_value

ODD_IDS = ["1", "a/b", "%2F", "ü ñ", "<script>", "x?y#z", "a b&c=d", "o'k", "..", "~:@!$", "\u2028"]


@pytest.mark.parametrize("slug", ["mail", "ünï code", "x{tag}", "tenant 42"])
def test_job_url_is_what_reverse_gives(slug: str) -> None:
    for job_id in ODD_IDS:
        assert job_url(slug, job_id) == reverse("bullpen:job", args=[slug, job_id])


def test_percent_texts() -> None:
    assert [percent_value(v) for v in (50.0, 33.333, 0.0, 100.0, 12.5)] == [
        "50",
        "33.33",
        "0",
        "100",
        "12.5",
    ]
    assert [percent_text(v) for v in (49.6, 0.0, 100.0)] == ["50", "0", "100"]
