"""Where a page's action lands and what it confirms there; signing out; read-only pages for
signed-out visitors. Through Django's client against the real redis-server and Node peer (the
same flows in Chromium are in test_browser_landing.py)."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import signing
from django.test import AsyncClient, override_settings

from dashboard.auth.basic_auth import SIGNED_OUT
from dashboard.pages import notices
from dashboard.pages.confirmations import confirmation
from queues.actions.result import ActionResult
from tests import settings as test_settings
from tests.support.markup import attribute, element, elements, has_attribute, text
from tests.support.peer import Peer

pytestmark = pytest.mark.django_db(transaction=True)

AUTH = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
HTMX = {**AUTH, "HX-Request": "true"}
WITHOUT_MESSAGES = [m for m in test_settings.MIDDLEWARE if "messages" not in m]


@pytest.fixture
def scenario(peer: Peer) -> dict[str, Any]:
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")
    return ids


def toast(page: str) -> str:
    """The text of the page's confirmation area, or "" when it is hidden."""
    area = element(page, "div", id="toast", role="status")
    if has_attribute(area, "hidden"):
        return ""
    return " ".join(text(notice) for notice in elements(area, "span", class_=None)).strip()


async def test_remove_from_htmx_lands_on_the_tab_with_a_confirmation(
    client: AsyncClient, scenario: dict[str, Any], redis_client: Any
) -> None:
    job_id = scenario["ids"]["failed"][1]  # "charge-9"
    plain = await client.post("/queues/api/queues/shop/jobs/nope/remove/", headers=AUTH)
    assert plain.status_code == 404
    response = await client.post(f"/queues/api/queues/shop/jobs/{job_id}/remove/", headers=HTMX)
    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "action": "remove",
        "queue": "shop",
        "jobIds": [job_id],
        "count": 1,
        "from": "failed",
    }
    assert response["HX-Redirect"] == "/queues/q/shop/?state=failed"
    assert "HX-Refresh" not in response
    assert not redis_client.exists(f"bull:shop:{job_id}")
    landing = (await client.get(response["HX-Redirect"])).content.decode()
    assert toast(landing) == f"Job {job_id} removed"
    assert f'data-job-id="{job_id}"' not in landing
    # Shown once: the next page says nothing.
    assert toast((await client.get("/queues/")).content.decode()) == ""


async def test_curl_gets_the_same_json_and_no_htmx_headers(
    client: AsyncClient, scenario: dict[str, Any]
) -> None:
    job_id = scenario["ids"]["failed"][0]
    response = await client.post(f"/queues/api/queues/shop/jobs/{job_id}/remove/", headers=AUTH)
    assert response.json() == {
        "ok": True,
        "action": "remove",
        "queue": "shop",
        "jobIds": [job_id],
        "count": 1,
        "from": "failed",
    }
    assert not [name for name in response.headers if name.lower().startswith("hx-")]
    assert "messages" not in response.cookies and notices.COOKIE not in response.cookies
    assert toast((await client.get("/queues/")).content.decode()) == ""


async def test_other_actions_refresh_and_confirm(
    client: AsyncClient, scenario: dict[str, Any], redis_client: Any
) -> None:
    failed = scenario["ids"]["failed"]
    bulk = await client.post(
        "/queues/api/queues/shop/bulk/",
        {"action": "remove", "ids": [*failed, "nope"]},
        headers=HTMX,
    )
    assert bulk["HX-Refresh"] == "true" and "HX-Redirect" not in bulk
    assert bulk.json()["count"] == 2 and redis_client.zcard("bull:shop:failed") == 0
    page = (await client.get("/queues/q/shop/?state=failed")).content.decode()
    assert toast(page) == "2 jobs removed, 1 refused"
    paused = await client.post("/queues/api/queues/shop/pause/", headers=HTMX)
    assert paused["HX-Refresh"] == "true"
    assert toast((await client.get("/queues/q/shop/")).content.decode()) == "Queue shop paused"


async def test_obliterate_lands_on_an_overview_without_the_queue(
    client: AsyncClient, scenario: dict[str, Any], bullpen_settings: dict[str, Any]
) -> None:
    # A kept queue list (as in production) must not list the obliterated queue until its
    # next scan.
    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 300}):
        before = (await client.get("/queues/")).content.decode()
        assert 'data-queue="shop-paused"' in before
        response = await client.post(
            "/queues/api/queues/shop-paused/obliterate/",
            headers={**HTMX, "HX-Prompt": "shop-paused"},
        )
        assert response.status_code == 200, response.content
        assert response["HX-Redirect"] == "/queues/"
        overview = (await client.get("/queues/")).content.decode()
    assert 'data-queue="shop-paused"' not in overview and 'data-queue="shop"' in overview
    assert toast(overview) == "Queue shop-paused obliterated"


@override_settings(MIDDLEWARE=WITHOUT_MESSAGES)
async def test_without_messages_a_signed_cookie_carries_the_confirmation(
    scenario: dict[str, Any],
) -> None:
    client = AsyncClient()
    job_id = scenario["ids"]["failed"][0]
    response = await client.post(f"/queues/api/queues/shop/jobs/{job_id}/remove/", headers=HTMX)
    assert "messages" not in response.cookies
    cookie = response.cookies[notices.COOKIE]
    assert cookie["path"] == "/queues/" and cookie["httponly"]
    assert signing.loads(cookie.value, salt="bullpen.notice") == f"Job {job_id} removed"
    landing = await client.get(response["HX-Redirect"])
    assert toast(landing.content.decode()) == f"Job {job_id} removed"
    assert landing.cookies[notices.COOKIE].value == ""  # forgotten once shown
    assert toast((await client.get("/queues/")).content.decode()) == ""


@pytest.mark.parametrize("messages_installed", [True, False])
async def test_crafted_links_and_cookies_say_nothing(
    client: AsyncClient, scenario: dict[str, Any], messages_installed: bool
) -> None:
    crafted = "<img src=x onerror=alert(1)>Queue shop obliterated"
    signed_elsewhere = signing.dumps(crafted, salt="another.purpose", compress=True)
    middleware = None if messages_installed else WITHOUT_MESSAGES
    with override_settings(**({"MIDDLEWARE": middleware} if middleware else {})):
        visitor = AsyncClient()
        visitor.cookies[notices.COOKIE] = signed_elsewhere
        visitor.cookies["messages"] = crafted
        query = "&".join(f"{key}={crafted}" for key in ("notice", "message", "toast", "done"))
        page = (await visitor.get(f"/queues/?{query}")).content.decode()
    assert toast(page) == ""
    # Neither as markup nor as text (the query string shows only, encoded, in the sign-in link).
    assert "<img" not in page and "obliterated" not in re.sub(r"<[^>]+>", " ", page)


async def test_a_job_id_in_a_confirmation_is_text(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    added = peer("add", "--queue", "mail", "--name", "n", "--opts", json.dumps({"jobId": hostile}))
    assert added["id"] == hostile
    url = "/queues/api/queues/mail/jobs/%3Cimg%20src=x%20onerror=alert(1)%3E/remove/"
    response = await client.post(url, headers=HTMX)
    assert response.status_code == 200, response.content
    landing = (await client.get(response["HX-Redirect"])).content.decode()
    assert toast(landing) == f"Job {hostile} removed"
    assert hostile not in landing and "&lt;img src=x onerror=alert(1)&gt;" in landing


async def test_replay_lands_on_the_job_it_became(
    client: AsyncClient, peer: Peer, redis_client: Any
) -> None:
    # A dead letter whose original was removed since: replaying re-adds it and removes the
    # dead letter, whose page would now be a 404.
    letter = {"queue": "hooks", "jobId": "hook-7", "name": "deliver", "data": {"n": 7}}
    peer(
        "add",
        "--queue",
        "dead-letter",
        "--name",
        "deliver",
        "--data",
        json.dumps(letter),
        "--opts",
        json.dumps({"jobId": "hooks.hook-7"}),
    )
    response = await client.post(
        "/queues/api/queues/dead-letter/jobs/hooks.hook-7/replay/", headers=HTMX
    )
    assert response.status_code == 200, response.content
    assert response["HX-Redirect"] == "/queues/q/hooks/jobs/hook-7/"
    assert not redis_client.exists("bull:dead-letter:hooks.hook-7")
    landing = await client.get(response["HX-Redirect"])
    assert landing.status_code == 200
    assert toast(landing.content.decode()) == (
        "Dead letter hooks.hook-7 replayed: job hook-7 of hooks re-added"
    )


def test_confirmation_texts() -> None:
    assert confirmation(ActionResult("remove", "shop", ["42"], 1, {"from": "failed"})) == (
        "Job 42 removed"
    )
    group = ActionResult("remove-group", "shop", ["1", "2", "3"], 3, {"results": {}})
    assert confirmation(group) == "3 jobs removed"
    one = ActionResult("bulk-retry", "shop", ["1"], 1, {"results": {"2": "active"}})
    assert confirmation(one) == "1 job retried, 1 refused"
    assert confirmation(ActionResult("obliterate", "shop")) == "Queue shop obliterated"
    long_id = "x" * 500
    text = confirmation(ActionResult("remove", "shop", [long_id], 1))
    assert text.startswith("Job xxx") and text.endswith("… removed") and len(text) < 100


# ---- signed-out visitors see no action -------------------------------------------------------


async def _pages(client: AsyncClient, scenario: dict[str, Any], **headers: str) -> dict[str, str]:
    failed, delayed = scenario["ids"]["failed"][0], scenario["ids"]["delayed"][0]
    urls = {
        "overview": "/queues/",
        "failed tab": "/queues/q/shop/?state=failed",
        "delayed tab": "/queues/q/shop/?state=delayed",
        "waiting tab": "/queues/q/shop/?state=waiting",
        "paused queue": "/queues/q/shop-paused/",
        "failed job": f"/queues/q/shop/jobs/{failed}/",
        "delayed job": f"/queues/q/shop/jobs/{delayed}/",
        "failure groups": "/queues/q/shop/groups/",
        "schedulers": "/queues/q/reports/schedulers/",
        "find": f"/queues/find/?id={failed}",
        "audit": "/queues/audit/",
    }
    pages = {}
    for name, url in urls.items():
        response = await client.get(url, headers=headers)
        assert response.status_code in (200, 302), (name, response.status_code)
        pages[name] = response.content.decode()
    return pages


async def test_signed_out_visitors_get_no_action_anywhere(
    client: AsyncClient, scenario: dict[str, Any], redis_server: Any
) -> None:
    from bullmq import Queue

    queue = Queue("reports", {"connection": redis_server.url})
    await queue.upsertJobScheduler("nightly", {"pattern": "0 2 * * *"}, "report", {}, {})
    await queue.close()
    signed_out = {"Authorization": "Basic " + base64.b64encode(f"{SIGNED_OUT}:-".encode()).decode()}
    for headers in ({}, signed_out):
        for name, page in (await _pages(client, scenario, **headers)).items():
            assert "hx-post" not in page, name
            assert 'data-testid="sign-out"' not in page, name
    operator = await _pages(client, scenario, **AUTH)
    acting = {name for name, page in operator.items() if "hx-post" in page}
    assert acting == {
        "failed tab",
        "delayed tab",
        "waiting tab",
        "paused queue",
        "failed job",
        "delayed job",
        "failure groups",
        "schedulers",
    }
    assert 'data-sign-out="bullpen-signed-out"' in operator["overview"]


# ---- signing out ------------------------------------------------------------------------------


async def test_sign_out_route_answers_401(client: AsyncClient) -> None:
    signed_out = {"Authorization": "Basic " + base64.b64encode(f"{SIGNED_OUT}:-".encode()).decode()}
    for headers in ({}, AUTH):
        # No credentials, or the right ones: a challenge, which makes a browser try the
        # script's wrong ones (or, asked directly, drop the ones it sent).
        response = await client.get("/queues/sign-out", headers=headers)
        assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Basic")
    # The script's wrong credentials: no challenge (no login dialog); the browser keeps them.
    response = await client.get("/queues/sign-out", headers=signed_out)
    assert response.status_code == 401 and "WWW-Authenticate" not in response
    assert 'data-testid="sign-in"' in response.content.decode()
    # They are never a user, and cost no password hash.
    started = asyncio.get_running_loop().time()
    for _ in range(20):
        page = await client.get("/queues/", headers=signed_out)
        assert 'data-testid="sign-in"' in page.content.decode()
    assert asyncio.get_running_loop().time() - started < 5
    refused = await client.post("/queues/api/queues/shop/pause/", headers=signed_out)
    assert refused.status_code == 401


async def test_sign_out_without_basic_users_asks_for_nothing(
    client: AsyncClient, bullpen_settings: dict[str, Any]
) -> None:
    with override_settings(BULLPEN={**bullpen_settings, "BASIC_AUTH_PLAIN": {}}):
        response = await client.get("/queues/sign-out")
    assert response.status_code == 401 and "WWW-Authenticate" not in response


async def test_session_users_sign_out_through_the_sites_logout(
    scenario: dict[str, Any],
) -> None:
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    page = (await client.get("/queues/")).content.decode()
    form = element(page, "form", class_="sign-out", method="post")
    assert attribute(form, "action") == "/admin/logout/"
    token = attribute(element(form, "input", name="csrfmiddlewaretoken"), "value")
    assert token
    assert "hx-post" in (await client.get("/queues/q/shop/?state=failed")).content.decode()
    # Without the token the site refuses; with it, the user is out and the pages read-only.
    assert (await client.post("/admin/logout/", {"next": "/queues/"})).status_code == 403
    done = await client.post("/admin/logout/", {"next": "/queues/", "csrfmiddlewaretoken": token})
    assert done.status_code == 302 and done["Location"] == "/queues/"
    after = (await client.get("/queues/q/shop/?state=failed")).content.decode()
    assert "hx-post" not in after and 'data-testid="sign-in"' in after
    with override_settings(LOGOUT_URL="/accounts/bye/"):
        await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
        page = (await client.get("/queues/")).content.decode()
    assert 'action="/accounts/bye/"' in page


async def test_bullpens_own_sign_out_signs_a_session_out(scenario: dict[str, Any]) -> None:
    admin = await User.objects.acreate_superuser("admin", "admin@example.com", "pw")
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(admin, backend="django.contrib.auth.backends.ModelBackend")
    page = (await client.get("/queues/")).content.decode()
    token = attribute(element(page, "input", name="csrfmiddlewaretoken"), "value")
    assert token
    assert (await client.post("/queues/sign-out")).status_code == 403  # CSRF
    done = await client.post(
        "/queues/sign-out", {"next": "https://evil.example/", "csrfmiddlewaretoken": token}
    )
    assert done.status_code == 302 and done["Location"] == "/queues/"
    after = (await client.get("/queues/q/shop/?state=failed")).content.decode()
    assert "hx-post" not in after and 'data-testid="sign-in"' in after
