"""Which language a page's parts come in: the switcher where the site routes ``set_language``,
and the language a live socket's updates are rendered in."""

from __future__ import annotations

import pytest
from django.test import override_settings

from dashboard.live.socket_language import socket_language
from dashboard.templatetags.bullpen_i18n import language_switch_url

pytestmark = pytest.mark.unit


def test_the_switcher_posts_to_set_language_unless_turned_off() -> None:
    assert language_switch_url() == "/i18n/setlang/"  # the standalone site's route
    with override_settings(BULLPEN={"LANGUAGE_SWITCHER": False}):
        assert language_switch_url() == ""


@pytest.mark.parametrize(
    ("query", "language"),
    [
        (b"lang=de", "de"),
        (b"ticket=abc&lang=fr", "fr"),
        (b"lang=de-AT", "de"),  # the closest the site offers
        (b"lang=ja", "en"),  # not one of the site's LANGUAGES: the site's LANGUAGE_CODE
        (b"lang=" + b"x" * 5000, "en"),
        (b"", "en"),
    ],
)
def test_a_socket_speaks_its_pages_language(query: bytes, language: str) -> None:
    assert socket_language({"query_string": query}) == language
