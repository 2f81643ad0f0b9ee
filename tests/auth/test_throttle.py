"""Guessing is throttled: basic credentials go through Django's authenticate(), where
django-axes locks a user name out from an address after 5 failures (429 with Retry-After);
every failure is in the audit log; a check costs one password hash, whether the name exists
or not; open reads check nobody's credentials; the admin's login is throttled too."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from axes.utils import reset
from django.contrib.auth.hashers import MD5PasswordHasher, make_password
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import AsyncClient, Client, override_settings

from dashboard.auth import basic_auth
from dashboard.auth.principal import from_scope
from dashboard.checks import throttle
from dashboard.models import AuditEntry

PAUSE_ALL = "/queues/api/pause-all/"
RIGHT = "s3cret-pass"  # the tests' operator (tests/settings.py)
COOL_OFF = "900"  # 15 minutes, in seconds


def basic(username: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def handshake(address: str, authorization: dict[str, str]) -> dict[str, Any]:
    """A websocket's scope, from ``address`` with these credentials."""
    return {
        "type": "websocket",
        "path": "/ws/bullpen/",
        "client": (address, 41000),
        "headers": [(b"authorization", authorization["Authorization"].encode())],
    }


class CountingHasher(MD5PasswordHasher):
    """A fast real hasher that counts its runs (a check or a new hash is one encode)."""

    algorithm = "counting_md5"
    runs = 0

    def encode(self, password: str, salt: str) -> str:
        CountingHasher.runs += 1
        return super().encode(password, salt)


@pytest.fixture
def counted() -> Iterator[type[CountingHasher]]:
    with override_settings(PASSWORD_HASHERS=["tests.auth.test_throttle.CountingHasher"]):
        basic_auth.check("operator", "warm-up")  # the users' hashes, made on the first check
        CountingHasher.runs = 0
        yield CountingHasher


async def sign_in_failures() -> list[tuple[str, str, int, bool]]:
    rows = AuditEntry.objects.filter(action="sign-in-failed").order_by("id")
    return [
        (row.username, row.remote_addr, row.status, bool(row.detail.get("lockedOut")))
        async for row in rows
    ]


@pytest.mark.django_db(transaction=True)
async def test_five_failures_lock_the_name_out_from_that_address(client: AsyncClient) -> None:
    statuses = [
        (await client.post(PAUSE_ALL, headers=basic("operator", f"guess-{n}"))).status_code
        for n in range(5)
    ]
    assert statuses == [401, 401, 401, 401, 429]
    # Locked out: the right password is refused too, unchecked, until the cool-off ends.
    locked = await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))
    assert locked.status_code == 429 and locked["Retry-After"] == COOL_OFF
    assert locked.json() == {"error": "Too many failed sign-ins: try again in 15 minutes."}
    assert "WWW-Authenticate" not in locked
    # Pages and the sign-in route say it too (the audit page is a page like the others).
    page = await client.get("/queues/audit/", headers=basic("operator", RIGHT))
    assert page.status_code == 429 and page["Retry-After"] == COOL_OFF
    assert "Too many failed sign-ins" in page.content.decode()
    sign_in = await client.get("/queues/sign-in", headers=basic("operator", RIGHT))
    assert sign_in.status_code == 429 and sign_in["Retry-After"] == COOL_OFF
    # Each failure is in the audit log with its name and address; the fifth locked it out.
    # The refusals while locked out were not checked, and axes counts them.
    failures = [("operator", "127.0.0.1", 401, False)] * 4 + [("operator", "127.0.0.1", 429, True)]
    assert await sign_in_failures() == failures
    # Another address is not locked out (a websocket handshake from it, say).
    assert (await from_scope(handshake("10.0.0.2", basic("operator", RIGHT)))).via == "basic"
    # An administrator lifts the lockout (axes' reset, also `manage.py axes_reset_username`).
    assert await sync_to_async(reset)(username="operator") == 1
    paused = await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))
    assert paused.status_code == 200, paused.content


@pytest.mark.django_db(transaction=True)
async def test_a_websocket_handshake_is_checked_for_its_address() -> None:
    principal = await from_scope(handshake("10.0.0.3", basic("operator", "guess")))
    assert principal.bad_credentials and not principal.authenticated
    assert await sign_in_failures() == [("operator", "10.0.0.3", 401, False)]


@pytest.mark.django_db(transaction=True)
async def test_the_lockout_ends_with_its_cool_off(client: AsyncClient) -> None:
    with override_settings(AXES_COOLOFF_TIME=timedelta(seconds=2)):
        for n in range(5):
            await client.post(PAUSE_ALL, headers=basic("operator", f"guess-{n}"))
        locked = await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))
        assert locked.status_code == 429 and locked["Retry-After"] == "2"
        assert locked.json()["error"] == "Too many failed sign-ins: try again in 2 s."
        await asyncio.sleep(2.2)
        paused = await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))
        assert paused.status_code == 200, paused.content


@pytest.mark.unit
def test_known_and_unknown_names_cost_one_hash_each(
    counted: type[CountingHasher], bullpen_settings: dict[str, Any]
) -> None:
    assert not basic_auth.check("operator", "wrong")  # a plain password, hashed at start
    assert counted.runs == 1
    assert not basic_auth.check("nobody", "wrong")  # checked against a random password's hash
    assert counted.runs == 2
    assert basic_auth.check("operator", RIGHT)
    assert counted.runs == 3
    users = {"ops": make_password("ops-pass")}
    with override_settings(BULLPEN={**bullpen_settings, "BASIC_AUTH_USERS": users}):
        basic_auth.check("ops", "warm-up")
        counted.runs = 0
        assert not basic_auth.check("ops", "wrong") and counted.runs == 1
        assert not basic_auth.check("nobody", "wrong") and counted.runs == 2
        assert basic_auth.check("ops", "ops-pass") and counted.runs == 3


@pytest.mark.django_db(transaction=True)
async def test_a_failed_sign_in_costs_one_hash_whoever_it_names(
    client: AsyncClient, counted: type[CountingHasher]
) -> None:
    # Through authenticate(): the site's own user table (ModelBackend, listed after Bullpen's
    # backend) never checks dashboard credentials, so an unknown name costs no second hash.
    for n, name in enumerate(("operator", "nobody", "operator", "nobody")):
        response = await client.post(PAUSE_ALL, headers=basic(name, f"guess-{n}"))
        assert response.status_code == 401
        assert counted.runs == n + 1, name
    assert [row[0] for row in await sign_in_failures()] == ["operator", "nobody"] * 2


@pytest.mark.django_db(transaction=True)
async def test_open_reads_check_no_credentials(
    client: AsyncClient, counted: type[CountingHasher]
) -> None:
    bogus = basic("nobody", "whatever")
    for _ in range(3):
        listed = await client.get("/queues/api/queues/", headers=bogus)
        assert listed.status_code == 200
    assert counted.runs == 0 and await sign_in_failures() == []
    # A page shows buttons to those who may act, so it checks what it is sent: once, and the
    # verdict is remembered for the same header.
    for _ in range(3):
        page = await client.get("/queues/", headers=bogus)
        assert page.status_code == 200 and "Sign in to act" in page.content.decode()
    assert counted.runs == 1
    assert await sign_in_failures() == [("nobody", "127.0.0.1", 401, False)]


@pytest.mark.django_db(transaction=True)
def test_the_admin_login_is_throttled() -> None:
    User.objects.create_superuser("admin", password="admin-pass-1")  # noqa: S106
    browser = Client(headers={"Accept": "text/html"})
    for n in range(4):
        form = browser.post("/admin/login/", {"username": "admin", "password": f"guess-{n}"})
        assert form.status_code == 200 and "Please enter the correct username" in form.text
    locked = browser.post("/admin/login/", {"username": "admin", "password": "guess-4"})
    assert locked.status_code == 429 and locked["Retry-After"] == COOL_OFF
    assert "Too many failed sign-ins: try again in 15 minutes." in locked.text
    right = {"username": "admin", "password": "admin-pass-1"}
    assert browser.post("/admin/login/", right).status_code == 429
    reset(username="admin")
    assert browser.post("/admin/login/", right).status_code == 302
    # The admin's failures are axes' to count; Bullpen's audit log has its own sign-ins.
    assert not AuditEntry.objects.filter(action="sign-in-failed").exists()


DIRECT = ["django.contrib.auth.backends.ModelBackend"]


@pytest.mark.django_db(transaction=True)
async def test_without_the_backend_sign_ins_work_unthrottled(client: AsyncClient) -> None:
    with override_settings(AUTHENTICATION_BACKENDS=DIRECT):
        (warning,) = throttle.check_throttling()
        assert warning.id == "bullpen.W017" and "not in AUTHENTICATION_BACKENDS" in warning.msg
        for n in range(7):
            wrong = await client.post(PAUSE_ALL, headers=basic("operator", f"guess-{n}"))
            assert wrong.status_code == 401
        paused = await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))
        assert paused.status_code == 200
    assert len(await sign_in_failures()) == 7  # still audited


@pytest.mark.unit
def test_throttling_checks(bullpen_settings: dict[str, Any]) -> None:
    assert throttle.check_throttling() == []  # tests/settings.py: as the standalone site
    model_first = [
        "axes.backends.AxesStandaloneBackend",
        "django.contrib.auth.backends.ModelBackend",
        "dashboard.auth_backend.BasicAuthBackend",
    ]
    with override_settings(AUTHENTICATION_BACKENDS=model_first):
        (warning,) = throttle.check_throttling()
    assert warning.id == "bullpen.W018" and "ModelBackend" in warning.msg
    with override_settings(AUTHENTICATION_BACKENDS=model_first[2:]):
        (warning,) = throttle.check_throttling()
    assert warning.id == "bullpen.W017" and "no axes backend" in warning.msg
    nobody = {**bullpen_settings, "BASIC_AUTH_PLAIN": {}}
    with override_settings(BULLPEN=nobody, AUTHENTICATION_BACKENDS=DIRECT):
        assert throttle.check_throttling() == []  # no basic-auth users: nothing to guess


@pytest.mark.django_db(transaction=True)
async def test_a_locked_out_client_learns_nothing_from_what_it_sends(client: AsyncClient) -> None:
    # The attack: a right password used by anyone in the last minutes was remembered, and a
    # locked-out client sending it got 200 where a wrong guess got 429 (a password oracle).
    assert (await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))).status_code == 200
    repeated = "guess-0"
    for n in range(5):
        await client.post(PAUSE_ALL, headers=basic("operator", f"guess-{n}"))
    for password in (RIGHT, repeated, "never-tried", RIGHT):
        refused = await client.post(PAUSE_ALL, headers=basic("operator", password))
        assert refused.status_code == 429, password
        assert refused["Retry-After"] == COOL_OFF
    # Nothing a locked-out client sent was remembered: lifted, its right password is checked.
    await sync_to_async(reset)(username="operator")
    assert (await client.post(PAUSE_ALL, headers=basic("operator", RIGHT))).status_code == 200


@pytest.mark.django_db(transaction=True)
async def test_behind_a_proxy_the_lockout_holds_for_each_forwarded_address(
    client: AsyncClient,
) -> None:
    # Behind a proxy, daphne's --proxy-headers makes X-Forwarded-For the scope's client.
    async def via(address: str, password: str) -> HttpResponse:
        authorization = basic("operator", password)["Authorization"].encode()
        headers = [(b"host", b"testserver"), (b"authorization", authorization)]
        scope = {"method": "POST", "path": PAUSE_ALL, "query_string": b""}
        response: HttpResponse = await client.request(
            **scope, headers=headers, client=[address, 41000]
        )
        return response

    for n in range(5):
        await via("203.0.113.5", f"guess-{n}")
    # Someone else signs in from another address: their verdict is remembered for them.
    assert (await via("198.51.100.7", RIGHT)).status_code == 200
    for password in (RIGHT, "guess-0", "guess-9"):
        locked = await via("203.0.113.5", password)
        assert locked.status_code == 429, password
    # A websocket handshake from the locked-out address is refused the same way.
    principal = await from_scope(handshake("203.0.113.5", basic("operator", RIGHT)))
    assert principal.locked_out and not principal.authenticated
    assert (await via("198.51.100.7", RIGHT)).status_code == 200
