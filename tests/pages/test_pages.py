"""The pages show what the API shows: overview, queue tabs with pagination, job detail."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import AsyncClient

from tests.support.markup import assert_in_html, attribute, element, elements, has_attribute, text
from tests.support.peer import Peer


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")
    return ids


def row_ids(html: str) -> list[str]:
    return [str(attribute(row, "data-job-id")) for row in elements(html, "tr", data_job_id=None)]


async def test_overview_lists_every_queue_with_counts(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    html = (await client.get("/queues/")).content.decode()
    for name in ("shop", "shop-children", "shop-paused"):
        assert f'data-queue="{name}"' in html
    shop = element(html, "tr", data_queue="shop")
    cells = {
        str(attribute(cell, "data-state")): text(element(cell, "a", href=None))
        for cell in elements(shop, "td", data_state=None)
    }
    assert cells == {
        "waiting": "4",
        "active": "1",
        "prioritized": "3",
        "delayed": "2",
        "waiting-children": "1",
        "completed": "2",
        "failed": "2",
    }
    paused_row = element(html, "tr", data_queue="shop-paused")
    assert_in_html('<span class="badge paused">paused</span>', paused_row)
    assert_in_html('<span class="badge paused" hidden>paused</span>', shop)


async def test_queue_tabs_show_the_state_jobs(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    api = await client.get("/queues/api/queues/shop/jobs/?state=failed")
    html = (await client.get("/queues/q/shop/?state=failed")).content.decode()
    assert row_ids(html) == [j["id"] for j in api.json()["jobs"]]
    assert 'class="tab current" data-state="failed"' in html
    assert "card declined" in html
    for state, ids in scenario["ids"].items():
        if state in (
            "waiting",
            "active",
            "prioritized",
            "delayed",
            "waiting-children",
            "completed",
        ):
            page = (await client.get(f"/queues/q/shop/?state={state}")).content.decode()
            assert sorted(row_ids(page)) == sorted(ids), state


async def test_queue_page_defaults_to_a_non_empty_state(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    html = (await client.get("/queues/q/shop-children/")).content.decode()
    assert 'class="tab current" data-state="waiting"' in html
    assert len(row_ids(html)) == 2


async def test_pagination_links(client: AsyncClient, peer: Peer) -> None:
    for i in range(23):
        peer("add", "--queue", "many", "--name", f"n{i}", "--data", "{}")
    first = (await client.get("/queues/q/many/?state=waiting&per_page=10")).content.decode()
    assert 'Page 1 of <span class="pages">3</span>' in first and 'rel="prev"' not in first
    assert 'rel="next">' in first  # shown; hidden (kept for live updates) on the last page
    last = (await client.get("/queues/q/many/?state=waiting&per_page=10&page=3")).content.decode()
    assert len(row_ids(last)) == 3 and 'rel="prev"' in last and 'rel="next" hidden>' in last
    oldest = (
        await client.get("/queues/q/many/?state=waiting&per_page=10&order=asc")
    ).content.decode()
    assert row_ids(oldest)[0] == "1"


async def test_failed_job_page(client: AsyncClient, scenario: dict[str, Any]) -> None:
    job_id = scenario["ids"]["failed"][0]
    html = (await client.get(f"/queues/q/shop/jobs/{job_id}/")).content.decode()
    assert 'data-testid="job-state">failed<' in html
    assert len(elements(html, "pre", class_="stack")) == 3
    assert "Stack trace (last attempt)" in html
    assert "3 of 3" in html  # attempts made of allowed
    times = elements(html, "time", datetime=None, data_ms=None, title=None)
    assert any(
        re.fullmatch(r"\d{4}-\d\d-\d\dT.+", str(attribute(t, "datetime")))
        and str(attribute(t, "data-ms")).isdigit()
        and str(attribute(t, "title")).endswith(" UTC")
        for t in times
    )
    assert any(
        re.fullmatch(r"\d+ (s|min) ago", text(span))
        for span in elements(html, "span", class_="rel")
    )
    assert html.count("<li>attempt ") == 3  # the log lines
    assert any(has_attribute(d, "open") for d in elements(html, "details", class_="j-node"))
    assert 'id="job-json" type="application/json"' in html


async def test_active_job_shows_progress_and_flow_links(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    active = (await client.get("/queues/q/shop/jobs/long-1/")).content.decode()
    assert '<progress max="100" value="40' in active
    parent = scenario["ids"]["flow"]["parent"]["id"]
    flow = (await client.get(f"/queues/q/shop/jobs/{parent}/")).content.decode()
    assert 'data-testid="flow"' in flow
    for child in scenario["ids"]["flow"]["children"]:
        assert f'href="/queues/q/{child["queue"]}/jobs/{child["id"]}/"' in flow


async def test_pages_load_htmx_and_static_files(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    html = (await client.get("/queues/")).content.decode()
    assert 'hx-boost="true"' in html
    scripts = [str(attribute(s, "src")) for s in elements(html, "script", src=None)]
    assert any("htmx" in src for src in scripts)
    styles = [str(attribute(s, "href")) for s in elements(html, "link", rel="stylesheet")]
    for src in scripts + styles:
        response = await client.get(src)
        response.close()
        assert response.status_code == 200, src


async def test_a_page_past_the_end_says_so_and_links_to_the_last(
    client: AsyncClient, peer: Peer
) -> None:
    for i in range(12):
        peer("add", "--queue", "few", "--name", f"n{i}", "--data", "{}")
    html = (await client.get("/queues/q/few/?state=waiting&per_page=10&page=7")).content.decode()
    assert 'data-testid="past-end"' in html
    assert "Page 7 is past the end: 12 waiting jobs fill 2 pages." in " ".join(html.split())
    assert (
        'href="?state=waiting&amp;page=2&amp;per_page=10&amp;order=desc">Go to the last page'
        in html
    )
    assert row_ids(html) == []
