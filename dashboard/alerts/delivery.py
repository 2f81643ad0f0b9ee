"""Delivering alert notices: e-mail through Django's e-mail backend (``EMAIL_BACKEND`` and the
``EMAIL_*`` settings), webhooks as JSON POSTs with the standard library. Each target is tried
``ATTEMPTS`` times with a doubling pause, every failure logged; then the notice is written to
the audit log with what reached whom. The targets it did not reach, and that did not refuse it
for good, are the caller's to try again later (queues/alerts/undelivered.py): once each, and
audited when they are reached.

Notices are written in the site's language (``LANGUAGE_CODE``): no one's page asked for them.

Webhook URLs often carry a secret in their path (Slack's do): logs and the audit log name only
their scheme and host. A webhook's redirect is never followed (it could point at an internal
address or another scheme): any 3xx answer is a refusal.

Sending blocks a thread (urllib, SMTP) for up to ``WEBHOOK_TIMEOUT_S``: it runs on a small pool of
its own, so that receivers that hang hold up only other notices, never the threads the job API
and the rest of the site share (asyncio's default executor).
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.mail import EmailMessage
from django.utils import translation

from dashboard.alerts import messages
from dashboard.audit import writer
from queues.alerts.state import Notice
from queues.alerts.watch import DeliverySettings

log = logging.getLogger("bullpen.alerts")

ATTEMPTS = 5
FIRST_PAUSE_S = 0.5  # then 1, 2 and 4 s: about 8 s from the first try to the last
WEBHOOK_TIMEOUT_S = 10.0
# Threads sending at once; more sends wait for one of them.
SENDING_THREADS = 4
# Its threads start as sends need them (none in a process that never sends).
_POOL = ThreadPoolExecutor(SENDING_THREADS, thread_name_prefix="bullpen-alerts")


class Refused(Exception):
    """The receiver refused the notice for good (a 4xx other than 429): not tried again."""


async def deliver(
    notice: Notice, targets: frozenset[str] | None = None, later: bool = False
) -> frozenset[str]:
    """Tell ``targets`` (those of ``DeliverySettings.targets``; None: every configured one)
    about ``notice`` and audit what came of it; the targets it did not reach but may later.

    A ``later`` round tries each target once, and is audited only when it reached one."""
    settings = DeliverySettings.from_config()
    named = zip(settings.targets, _sends(notice, settings), strict=True)
    chosen = [(target, *send) for target, send in named if targets is None or target in targets]
    if not chosen:
        return frozenset()  # delivery was turned off since the notice was decided
    attempts = 1 if later else ATTEMPTS
    outcomes = await asyncio.gather(
        *(_with_retries(shown, send, notice, attempts) for _, shown, send in chosen)
    )
    failed: dict[str, str] = {}
    delivered: list[str] = []
    kept: list[str] = []
    owed: set[str] = set()
    for (target, shown, _), (error, again) in zip(chosen, outcomes, strict=True):
        if not error:
            delivered.append(shown)
            continue
        failed[shown] = error
        if again:
            kept.append(shown)
            owed.add(target)
    if delivered or not later:
        await writer.record_alert(notice, delivered, failed, kept)
    return frozenset(owed)


def _sends(notice: Notice, settings: DeliverySettings) -> list[tuple[str, Callable[[], None]]]:
    """What tells each target (in ``settings.targets``'s order), named as logs show it."""
    sends: list[tuple[str, Callable[[], None]]] = []
    if settings.email_to:
        sends.append(("e-mail", partial(_email, notice, settings)))
    with translation.override(django_settings.LANGUAGE_CODE):
        body = json.dumps(messages.webhook_body(notice, settings.link_base)).encode()
    for number, url in enumerate(settings.webhooks, start=1):
        # Numbered: two webhooks on one host must stay apart in the audit log.
        sends.append((f"webhook {number} {_shown(url)}", partial(_post, url, body)))
    return sends


async def _with_retries(
    target: str, send: Callable[[], None], notice: Notice, attempts: int
) -> tuple[str, bool]:
    """Send until it works or ``attempts`` tries failed: the last error ("" once sent), and
    whether it may be tried again later (not when refused for good)."""
    what = f"{notice.status} {notice.alert.rule} on {notice.queue!r}"
    pause = FIRST_PAUSE_S
    for attempt in range(1, attempts + 1):
        try:
            await asyncio.get_running_loop().run_in_executor(_POOL, send)
        except Refused as error:
            log.error("alerts: %s refused %s for good: %s", target, what, error)
            return str(error), False
        except Exception as error:  # the network, SMTP, a 5xx: worth another try
            if attempt == attempts:
                log.error("alerts: could not tell %s to %s, for now: %s", what, target, error)
                return str(error) or type(error).__name__, True
            log.warning(
                "alerts: telling %s to %s failed (try %d of %d), again in %.1f s: %s",
                what,
                target,
                attempt,
                attempts,
                pause,
                error,
            )
            await asyncio.sleep(pause)
            pause *= 2
        else:
            log.info("alerts: told %s to %s", what, target)
            return "", False
    return "not sent", True  # not reached: the loop returns


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Answers a 3xx with the HTTPError it is, instead of following it."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def _email(notice: Notice, settings: DeliverySettings) -> None:
    with translation.override(django_settings.LANGUAGE_CODE):
        subject = messages.email_subject(notice)
        body = messages.email_body(notice, settings.link_base)
    EmailMessage(
        subject,
        body,
        None,  # DEFAULT_FROM_EMAIL
        list(settings.email_to),
        headers={"X-Bullpen-Notice-Id": notice.id},  # the same on every try of the notice
    ).send()


def _post(url: str, body: bytes) -> None:
    if urlsplit(url).scheme not in ("http", "https"):  # urllib would open file: URLs too
        raise Refused("not an http:// or https:// URL")
    request = urllib.request.Request(  # noqa: S310 - http(s) only, checked just above
        url,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "User-Agent": "Bullpen alerts"},
    )
    try:
        with _opener.open(request, timeout=WEBHOOK_TIMEOUT_S) as response:
            response.read(65536)
    except urllib.error.HTTPError as error:
        # The error holds the answer's open socket: closed here, whether it is tried again or not.
        error.close()
        if error.code == 429 or error.code >= 500:
            raise
        if 300 <= error.code < 400:
            raise Refused(f"HTTP {error.code}: redirects are not followed") from None
        raise Refused(f"HTTP {error.code}") from None


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
