"""Queue names and job ids in URL segments: any character survives the round trip."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from django.urls import resolve, reverse

from dashboard.pages.converters import NameConverter

NAMES = ["mail", "a/b", "%2F", "100%", "ü ñ", "x?y#z", "..", "{eu}:email", "a%2fb/%25"]


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name: str) -> None:
    converter = NameConverter()
    segment = converter.to_url(name)
    assert "/" not in segment
    assert converter.to_python(segment) == name


@pytest.mark.parametrize("name", NAMES)
def test_routes_resolve_back_to_the_name(name: str) -> None:
    url = reverse("bullpen:job", args=[name, name])
    # The server percent-decodes the path before routing, as Django's handlers do.
    match = resolve(unquote(url))
    assert match.kwargs and set(match.kwargs.values()) == {name}
