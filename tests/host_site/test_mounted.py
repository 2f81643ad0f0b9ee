"""Bullpen as installed from its wheel into this site: pages under /ops/queues/ behind the
site's own login, the websocket through the site's asgi.py, and who may act."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from browser import Browser, signed_in
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.core.checks import run_checks
from django.core.management import call_command
from django.template.loader import get_template
from django.test import override_settings
from django.urls import URLPattern, URLResolver

import dashboard
import queues
from dashboard import urls as bullpen_urls

pytestmark = pytest.mark.django_db(transaction=True)
MOUNT = "/ops/queues/"
LOGIN = "/accounts/login/"


def _installed(path: str) -> bool:
    return Path(path).resolve().is_relative_to(Path(sys.prefix).resolve())


def test_bullpen_comes_from_the_installed_wheel() -> None:
    assert _installed(dashboard.__file__) and _installed(queues.__file__)
    loaded: Any = get_template("bullpen/base.html")
    template = str(loaded.origin.name)
    assert _installed(template) and Path(template).parts[-4:-2] == ("dashboard", "templates")
    for asset in ("bullpen/app.css", "bullpen/app.js", "bullpen/live.js"):
        found = finders.find(asset)
        assert isinstance(found, str) and _installed(found), asset


def test_system_checks_pass(redis_url: str) -> None:
    # Every check runs and none has anything to say; Bullpen's deployment check (Redis reached)
    # as well, without Django's own deployment advice, which a test site does not follow.
    call_command("check", fail_level="WARNING")
    call_command("check", deploy=True, tags=["bullpen"], fail_level="WARNING")


def _routes(patterns: list[Any], prefix: str = "") -> list[str]:
    """Each route's whole pattern, its included route lists walked."""
    found = []
    for entry in patterns:
        assert isinstance(entry, URLPattern | URLResolver)
        if isinstance(entry, URLResolver):
            found += _routes(entry.url_patterns, prefix + str(entry.pattern))
        else:
            found.append(prefix + str(entry.pattern))
    return found


def _every_bullpen_url() -> list[str]:
    """Each route of dashboard.urls, with sample arguments: nothing may be open."""
    samples = {"queue": "emails", "job_id": "1"}
    found = [
        MOUNT + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: samples.get(m[1], "sample"), route)
        for route in _routes(bullpen_urls.urlpatterns)
    ]
    assert len(found) > 10
    return found


async def test_anonymous_is_refused_everywhere(
    users: dict[str, User], emails: dict[str, Any], redis_url: str
) -> None:
    browser = Browser()
    page = await browser.get(MOUNT)
    assert page.status == 302 and page.headers["location"] == f"{LOGIN}?next={MOUNT}"
    login = await browser.get(page.headers["location"])
    assert login.status == 200 and 'data-host-site="acme"' in login.text
    api = await browser.get(MOUNT + "api/queues/")
    assert api.status == 401 and "error" in api.json()
    for url in _every_bullpen_url():
        for method in ("GET", "POST"):
            response = await browser.request(method, url)
            assert response.status in (302, 401, 403, 404, 405), (method, url, response.status)
            if response.status == 302:
                assert response.headers["location"].startswith(LOGIN), (method, url)
            assert b"ada@example.com" not in response.body
    client = redis.Redis.from_url(redis_url)
    assert not client.hget("bull:emails:meta", "paused")
    client.close()


async def test_staff_pages_render_under_the_prefix(
    users: dict[str, User], emails: dict[str, Any]
) -> None:
    browser = await signed_in("viewer")
    overview = await browser.get(MOUNT)
    assert overview.status == 200, overview.text[:500]
    assert 'class="brand"' in overview.text and 'data-host-site="acme"' not in overview.text
    assert f'data-ws-path="{MOUNT}ws/"' in overview.text
    local = [link for link in overview.links() if link.startswith("/")]
    assert local and all(link.startswith((MOUNT, "/static/")) for link in local), local
    assert "/static/bullpen/app.css" in local
    queue_link = f"{MOUNT}q/emails/"
    assert queue_link in local
    queue_page = await browser.get(queue_link)
    assert queue_page.status == 200
    job_link = f"{MOUNT}q/emails/jobs/{emails['job_id']}/"
    assert job_link in queue_page.links()
    job_page = await browser.get(job_link)
    assert job_page.status == 200 and "ada@example.com" in job_page.text
    api = await browser.get(MOUNT + "api/queues/")
    assert api.status == 200
    assert [q["name"] for q in api.json()["queues"]] == ["emails"]


async def test_who_may_act(users: dict[str, User], emails: dict[str, Any], redis_url: str) -> None:
    from dashboard.models import AuditEntry

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    pause = f"{MOUNT}api/queues/emails/pause/"
    viewer = await signed_in("viewer")
    refused = await viewer.act(pause)
    assert refused.status == 403, refused.text
    assert not client.hget("bull:emails:meta", "paused")

    operator = await signed_in("operator")
    no_token = await operator.post(pause, headers={"origin": "http://testserver"})
    assert no_token.status == 403 and "CSRF" in no_token.json()["error"]
    done = await operator.act(pause)
    assert done.status == 200, done.text
    assert client.hget("bull:emails:meta", "paused") == "1"
    entry = await AuditEntry.objects.filter(status=200).aget()
    assert (entry.username, entry.via, entry.action, entry.queue) == (
        "operator",
        "session",
        "pause",
        "emails",
    )
    client.close()


async def test_operator_signs_out_through_the_sites_logout(
    users: dict[str, User], emails: dict[str, Any]
) -> None:
    operator = await signed_in("operator")
    queue_page = await operator.get(f"{MOUNT}q/emails/")
    assert "hx-post" in queue_page.text
    # The Sign out button posts to the site's own logout view, with the CSRF token.
    form = re.search(r'<form class="sign-out" method="post" action="([^"]+)"', queue_page.text)
    assert form and form[1] == "/accounts/logout/", queue_page.text[:2000]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', queue_page.text)
    assert token
    done = await operator.post(form[1], {"csrfmiddlewaretoken": token[1], "next": MOUNT})
    assert done.status == 302 and done.headers["location"] == MOUNT
    # Signed out: the site's login again, and Bullpen's pages are no longer the user's.
    again = await operator.get(f"{MOUNT}q/emails/")
    assert again.status == 302 and again.headers["location"].startswith(LOGIN)
    pause = f"{MOUNT}api/queues/emails/pause/"
    assert (await operator.post(pause, headers={"origin": "http://testserver"})).status == 401


async def test_staff_without_permission_and_non_staff_are_forbidden(
    users: dict[str, User], emails: dict[str, Any]
) -> None:
    for username in ("staff", "customer"):
        browser = await signed_in(username)
        page = await browser.get(MOUNT)
        assert page.status == 403 and "ada@example.com" not in page.text
        assert (await browser.get(MOUNT + "api/queues/")).status == 403
        assert (await browser.act(f"{MOUNT}api/queues/emails/pause/")).status == 403


async def _receive_until(socket: Any, wanted: Any, timeout: float = 15) -> dict[str, Any]:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        try:
            message = await socket.receive_json_from(timeout=max(0.05, deadline - time.monotonic()))
        except TimeoutError:
            break
        # Several updates of one moment arrive as one "batch" message.
        for part in message["messages"] if message.get("type") == "batch" else [message]:
            if wanted(part):
                return dict(part)
            seen.append(part)
    raise AssertionError(f"no matching message in {timeout}s: {seen!r:.1000}")


async def test_websocket_through_the_host_asgi(
    users: dict[str, User], emails: dict[str, Any], redis_url: str
) -> None:
    browser = await signed_in("viewer")
    page = await browser.get(MOUNT)
    path = page.text.split('data-ws-path="', 1)[1].split('"', 1)[0]
    socket = browser.websocket(path)
    connected, _ = await socket.connect(timeout=10)
    assert connected
    status = await socket.receive_json_from(timeout=10)
    # The reader's own finding on Redis, once it has one: never "ok" before it answered.
    assert (status["type"], status["redis"]) == ("status", "ok")
    await socket.send_json_to({"watch": "overview"})
    # A producer adds a job: the count reaches the page over the socket.
    from bullmq import Queue

    queue = Queue("emails", {"connection": redis_url, "prefix": "bull"})
    await queue.add("welcome", {"to": "grace@example.com"})
    await queue.close()

    def two_waiting(message: dict[str, Any]) -> bool:
        entries = message.get("queues", []) if message.get("type") == "counts" else []
        return any(q["slug"] == "emails" and q["counts"]["waiting"] == 2 for q in entries)

    await _receive_until(socket, two_waiting)
    await socket.disconnect()


async def test_websocket_refuses_anonymous_and_other_origins(users: dict[str, User]) -> None:
    anonymous = Browser().websocket(f"{MOUNT}ws/")
    assert await anonymous.connect(timeout=10) == (False, 4403)
    viewer = await signed_in("viewer")
    foreign = viewer.websocket(f"{MOUNT}ws/", origin="https://evil.example")
    connected, _ = await foreign.connect(timeout=10)
    assert not connected


async def test_admin_links_to_bullpen(users: dict[str, User]) -> None:
    # Staff who may act see the link on the admin index; Bullpen's admin page has it too.
    operator = await signed_in("operator")
    index = await operator.get("/admin/")
    assert index.status == 200 and index.text.count(f'href="{MOUNT}"') == 2  # caption and row
    root = await signed_in("root")
    for admin_page in ("/admin/", "/admin/bullpen/"):
        page = await root.get(admin_page)
        assert page.status == 200, (admin_page, page.status)
        assert page.text.count(f'href="{MOUNT}"') == 2, admin_page
        # One "Bullpen" box: the dashboard is the first row of the audit log's.
        boxes = re.findall(r"<caption>\s*<a [^>]*>\s*Bullpen\s*</a>", page.text)
        assert len(boxes) == 1, (admin_page, boxes)
        assert "/admin/bullpen/auditentry/" in page.text


async def test_a_site_without_a_login_page_of_its_own(
    users: dict[str, User], emails: dict[str, Any]
) -> None:
    # A fresh startproject: the admin and Bullpen. Django's default LOGIN_URL names no page there.
    fresh = "hostsite.startproject_urls"
    operator = await signed_in("operator")  # through the site's own login, before it goes
    with override_settings(ROOT_URLCONF=fresh, LOGIN_URL="/accounts/login/"):
        found = [m for m in run_checks(tags=["bullpen"]) if m.id == "bullpen.W020"]
        assert len(found) == 1 and "'/accounts/login/'" in found[0].msg, found
    # As the docs say: the admin's login. Signed-out visits and Sign out reach a real page.
    with override_settings(ROOT_URLCONF=fresh, LOGIN_URL="admin:login"):
        assert not [m for m in run_checks(tags=["bullpen"]) if m.id == "bullpen.W020"]
        visitor = Browser()
        page = await visitor.get(MOUNT)
        assert page.status == 302 and page.headers["location"] == f"/admin/login/?next={MOUNT}"
        assert (await visitor.get(page.headers["location"])).status == 200
        queue_page = await operator.get(f"{MOUNT}q/emails/")
        form = re.search(r'<form class="sign-out" method="post" action="([^"]+)"', queue_page.text)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', queue_page.text)
        assert form and token and form[1] == "/admin/logout/", queue_page.text[:2000]
        done = await operator.post(form[1], {"csrfmiddlewaretoken": token[1], "next": MOUNT})
        assert done.status == 302 and done.headers["location"] == MOUNT
        again = await operator.get(MOUNT)
        assert again.status == 302 and again.headers["location"].startswith("/admin/login/")
        assert (await operator.get(again.headers["location"])).status == 200
