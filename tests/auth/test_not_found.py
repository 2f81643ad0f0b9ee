"""Unknown URLs under the mount: the dashboard's 404 page, JSON under api/, at any prefix."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import AsyncClient, override_settings
from django.urls import include, path

from tests.support.action_requests import AUTH

# This module doubles as a URLconf that mounts Bullpen elsewhere than /queues/.
urlpatterns = [path("ops/bullpen/", include("dashboard.urls"))]


@pytest.mark.parametrize("mount", ["/queues/", "/ops/bullpen/"])
async def test_unknown_page_is_the_styled_404(client: AsyncClient, mount: str) -> None:
    urlconf = "bullpen_site.urls" if mount == "/queues/" else __name__
    with override_settings(ROOT_URLCONF=urlconf):
        response = await client.get(f"{mount}no/such/page/")
        html = response.content.decode()
        assert response.status_code == 404
        assert response["Content-Type"].startswith("text/html")
        assert 'class="error-box"' in html and "<h1>404</h1>" in html
        assert f"{mount}no/such/page/ is not a page of this dashboard" in html
        # The dashboard's own frame: its header links back to the overview under the mount.
        assert f'<a class="brand" href="{mount}">' in html

        api = await client.get(f"{mount}api/queues/mail/nonsense/")
        assert api.status_code == 404 and api["Content-Type"] == "application/json"
        assert api.json() == {"error": f"No API route at {mount}api/queues/mail/nonsense/"}
        assert (await client.get(f"{mount}api")).json()["error"].startswith("No API route")


async def test_job_data_in_the_path_is_escaped(client: AsyncClient) -> None:
    response = await client.get("/queues/<script>alert(1)</script>/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


@pytest.mark.django_db(transaction=True)
async def test_a_post_to_a_mistyped_action_is_a_404(client: AsyncClient) -> None:
    # Not Django's CSRF 403, nor a 405: there is no such action.
    response = await client.post("/queues/api/queues/mail/retyr/", headers=AUTH)
    assert response.status_code == 404
    assert response.json() == {"error": "No API route at /queues/api/queues/mail/retyr/"}
    page = await client.post("/queues/nowhere/")
    assert page.status_code == 404


async def test_missing_slash_still_redirects(client: AsyncClient) -> None:
    audit = await client.get("/queues/audit?x=1")
    assert audit.status_code == 301 and audit["Location"] == "/queues/audit/?x=1"
    queue = await client.get("/queues/q/mail")
    assert queue.status_code == 301 and queue["Location"] == "/queues/q/mail/"
    # A path that is unknown with its slash too is a 404 at once.
    assert (await client.get("/queues/nothing")).status_code == 404


async def test_closed_dashboard_says_nothing_to_strangers(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    closed = {k: v for k, v in bullpen_settings.items() if k != "READ_ACCESS"}
    with override_settings(BULLPEN=closed):
        page = await client.get("/queues/no/such/page/")
        assert page.status_code == 302 and "/login/" in page["Location"]
        api = await client.get("/queues/api/nonsense/")
        assert api.status_code == 401 and "error" in api.json()
