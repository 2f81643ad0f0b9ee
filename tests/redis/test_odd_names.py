"""Names no browser should be fooled by or lose: invisible and direction-changing characters
are shown as their codes, and a queue named ``..`` (or ``.``, ``a/b``, ``100%``) has pages."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient
from django.urls import reverse

from dashboard.templatetags.bullpen import job_url, visible, visible_text
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

LOOKALIKE = "\u202eliame"  # shows as "email" once the override turns it around


def test_invisible_characters_are_shown_as_codes() -> None:
    assert str(visible(LOOKALIKE)) == '<span class="ctrl">\\u202E</span>liame'
    assert str(visible("a\u200bb\x07<i>")) == (
        'a<span class="ctrl">\\u200B</span>b<span class="ctrl">\\u0007</span>&lt;i&gt;'
    )
    assert str(visible("plain <b>")) == "plain &lt;b&gt;"
    assert visible_text("x\u2066y\x85") == "x\\u2066y\\u0085"


@pytest.mark.parametrize("name", ["..", ".", "a/b", "100%", "%2E%2E"])
def test_path_like_names_have_urls_browsers_keep(name: str) -> None:
    url = reverse("bullpen:queue", args=[name])
    segment = url.removeprefix("/queues/q/").removesuffix("/")
    assert segment not in (".", "..") and "/" not in segment
    assert segment.lower().replace("%252e", "") not in (".", "..")
    assert job_url(name, "..") == reverse("bullpen:job", args=[name, ".."])


async def test_dot_dot_queue_and_lookalike_names_render(client: AsyncClient, peer: Peer) -> None:
    dots = peer("add", "--queue", "..", "--name", LOOKALIKE, "--data", json.dumps({"a": 1}))
    peer("add", "--queue", LOOKALIKE, "--name", "send", "--data", "{}")
    page = await client.get(reverse("bullpen:queue", args=[".."]))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<span class="ctrl">\\u202E</span>liame' in html and LOOKALIKE not in html
    job = await client.get(reverse("bullpen:job", args=["..", dots["id"]]))
    assert job.status_code == 200 and LOOKALIKE not in job.content.decode()
    overview = (await client.get("/queues/")).content.decode()
    assert '<span class="ctrl">\\u202E</span>liame</a>' in overview
    listed: Any = (await client.get(reverse("bullpen:api-jobs", args=[".."]))).json()
    assert listed["jobs"][0]["name"] == LOOKALIKE  # the API gives the name as it is
