"""The named steps every action goes through, each on its own and in their order: what each
refuses, with which status and message, and that the first refusal is the one answered."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest
from django.test import RequestFactory, override_settings

from dashboard.audit import writer
from dashboard.auth import mutation_steps as steps
from dashboard.auth.mutation_steps import Attempt, Refusal
from dashboard.auth.principal import ANONYMOUS, Principal

OPERATOR = Principal("operator", "basic")
STAFF = Principal("staff", "session")
FROM_ELSEWHERE = {"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}


def attempt(
    queue: str | None = "orders",
    *,
    method: str = "post",
    principal: Principal = OPERATOR,
    headers: dict[str, str] | None = None,
    data: dict[str, Any] | None = None,
) -> Attempt:
    """A request as the steps see it, its principal already known (as the principal step
    leaves it on the request)."""
    request: HttpRequest = getattr(RequestFactory(), method)(
        "/queues/api/queues/orders/pause/", data or {}, headers=headers or {}
    )
    request._bullpen_principal = principal  # type: ignore[attr-defined]
    kwargs = {} if queue is None else {"queue": queue}
    return Attempt(request, "pause", kwargs, queue_scoped=queue is not None)


def said(refusal: Refusal | None) -> tuple[int, str] | None:
    return None if refusal is None else (refusal.status, refusal.message)


def test_the_checks_run_in_this_order() -> None:
    assert [check.__name__ for check in steps.CHECKS] == [
        "allow_method",
        "identify_principal",
        "read_body",
        "scope_queue",
        "check_permission",
        "check_same_site",
        "check_read_only",
        "check_store",
    ]


async def test_method_refuses_all_but_post() -> None:
    assert await steps.allow_method(attempt()) is None
    refusal = await steps.allow_method(attempt(method="get"))
    assert refusal is not None and said(refusal) == (405, "Method not allowed")
    assert not refusal.audited
    assert refusal.answer()["Allow"] == "POST"


async def test_principal_refuses_whoever_did_not_sign_in() -> None:
    assert await steps.identify_principal(attempt()) is None
    anonymous = await steps.identify_principal(attempt(principal=ANONYMOUS))
    assert said(anonymous) == (401, "Authentication required")
    assert anonymous is not None and not anonymous.audited  # nobody to name in a row
    assert anonymous.answer()["WWW-Authenticate"].startswith("Basic")
    wrong = Principal("operator", "anonymous", bad_credentials=True)
    assert said(await steps.identify_principal(attempt(principal=wrong))) == (
        401,
        "Wrong username or password",
    )


async def test_principal_asks_no_browser_dialog_for_a_page_button() -> None:
    refusal = await steps.identify_principal(
        attempt(principal=ANONYMOUS, headers={"HX-Request": "true"})
    )
    assert refusal is not None and refusal.status == 401
    assert "WWW-Authenticate" not in refusal.answer()


async def test_body_refuses_one_too_big() -> None:
    assert await steps.read_body(attempt(data={"confirm": "x"})) is None
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10):
        refusal = await steps.read_body(attempt(data={"confirm": "x" * 100}))
    assert refusal is not None and refusal.status == 413 and refusal.audited


async def test_queue_scope_refuses_another_spelling_and_a_hidden_queue(
    bullpen_settings: dict[str, Any],
) -> None:
    assert await steps.scope_queue(attempt("orders")) is None
    assert await steps.scope_queue(attempt(None)) is None  # an action on no one queue
    assert said(await steps.scope_queue(attempt("bull:orders"))) == (
        404,
        "Unknown queue 'bull:orders': its name in URLs is 'orders'",
    )
    rules = [{"QUEUES": "orders", "VIEW": ["user:operator"]}]
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_ACCESS": rules}):
        hidden = await steps.scope_queue(attempt("secret"))
    # Said as for a queue that does not exist; the row says what it was.
    assert hidden is not None and said(hidden) == (404, "Unknown queue 'secret'")
    assert hidden.refused and hidden.audit_error == writer.HIDDEN_QUEUE


async def test_permission_refuses_readers_and_view_only_queues(
    bullpen_settings: dict[str, Any],
) -> None:
    assert await steps.check_permission(attempt()) is None
    # Signed in to the site, but not staff with bullpen.operate (WRITE_ACCESS's default).
    refusal = await steps.check_permission(attempt(principal=STAFF))
    assert said(refusal) == (403, "Forbidden: this user may not act on queues")
    rules = [{"QUEUES": "orders", "VIEW": ["user:operator"], "OPERATE": ["user:boss"]}]
    with override_settings(BULLPEN={**bullpen_settings, "QUEUE_ACCESS": rules}):
        refusal = await steps.check_permission(attempt("orders"))
    assert said(refusal) == (403, "Forbidden: this user may only view 'orders'")


async def test_same_site_refuses_other_sites_and_a_session_without_its_token() -> None:
    assert await steps.check_same_site(attempt()) is None  # curl -u: no Origin, no cookie
    refusal = await steps.check_same_site(attempt(headers=FROM_ELSEWHERE))
    assert said(refusal) == (403, "cross-site request refused (Sec-Fetch-Site: cross-site)")
    refusal = await steps.check_same_site(attempt(principal=STAFF))
    assert said(refusal) == (403, "CSRF token missing or incorrect")


async def test_read_only_refuses_the_dashboard_or_the_queue(
    bullpen_settings: dict[str, Any],
) -> None:
    assert await steps.check_read_only(attempt()) is None
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        assert said(await steps.check_read_only(attempt())) == (
            403,
            "Read-only: actions are disabled for 'orders'",
        )
        assert said(await steps.check_read_only(attempt(None))) == (
            403,
            "Read-only: actions are disabled",
        )
    per_queue = {**bullpen_settings, "QUEUE_OPTIONS": {"orders": {"read_only": True}}}
    with override_settings(BULLPEN=per_queue):
        assert said(await steps.check_read_only(attempt("orders"))) == (
            403,
            "Read-only: actions are disabled for 'orders'",
        )
        assert await steps.check_read_only(attempt("mail")) is None


@pytest.mark.parametrize(
    ("asked", "first"),
    [
        ({"method": "get", "principal": ANONYMOUS}, (405, "Method not allowed")),
        ({"principal": ANONYMOUS, "headers": FROM_ELSEWHERE}, (401, "Authentication required")),
        (
            {"queue": "bull:orders", "headers": FROM_ELSEWHERE},
            (404, "Unknown queue 'bull:orders': its name in URLs is 'orders'"),
        ),
        (
            {"principal": STAFF, "headers": FROM_ELSEWHERE},
            (403, "Forbidden: this user may not act on queues"),
        ),
        (
            {"headers": FROM_ELSEWHERE},
            (403, "cross-site request refused (Sec-Fetch-Site: cross-site)"),
        ),
    ],
)
async def test_the_first_refusal_is_the_one_answered(
    bullpen_settings: dict[str, Any], asked: dict[str, Any], first: tuple[int, str]
) -> None:
    # Read-only too, so that every request here would be refused by a later step as well.
    with override_settings(BULLPEN={**bullpen_settings, "READ_ONLY": True}):
        assert said(await steps.first_refusal(attempt(**asked))) == first


async def test_a_request_every_check_lets_through_reaches_the_action() -> None:
    assert await steps.first_refusal(attempt()) is None
