"""Delivering alert notices: e-mail through Django's e-mail backend (``EMAIL_BACKEND`` and the
``EMAIL_*`` settings), webhooks as JSON POSTs with the standard library. Each target is tried
``ATTEMPTS`` times with a doubling pause, every failure logged; then the notice is written to
the audit log with what reached whom.

Notices are written in the site's language (``LANGUAGE_CODE``): no one's page asked for them.

Webhook URLs often carry a secret in their path (Slack's do): logs and the audit log name only
their scheme and host.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.error
import urllib.request
from collections.abc import Callable
from functools import partial
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.mail import send_mail
from django.utils import translation

from dashboard import alert_messages, audit
from queues.alert_state import Notice
from queues.alert_watch import DeliverySettings

log = logging.getLogger("bullpen.alerts")

ATTEMPTS = 5
FIRST_PAUSE_S = 0.5  # then 1, 2 and 4 s: about 8 s from the first try to the last
WEBHOOK_TIMEOUT_S = 10.0


class Refused(Exception):
    """The receiver refused the notice for good (a 4xx other than 429): not tried again."""


async def deliver(notice: Notice) -> None:
    """Tell every configured target about ``notice``, then audit what came of it."""
    settings = DeliverySettings.from_config()
    sends: list[tuple[str, Callable[[], None]]] = []
    if settings.email_to:
        sends.append(("e-mail", partial(_email, notice, settings)))
    with translation.override(django_settings.LANGUAGE_CODE):
        body = json.dumps(alert_messages.webhook_body(notice, settings.link_base)).encode()
    for number, url in enumerate(settings.webhooks, start=1):
        # Numbered: two webhooks on one host must stay apart in the audit log.
        sends.append((f"webhook {number} {_shown(url)}", partial(_post, url, body)))
    if not sends:
        return  # delivery was turned off since the notice was decided
    outcomes = await asyncio.gather(*(_with_retries(to, send, notice) for to, send in sends))
    failed = {target: error for (target, _), error in zip(sends, outcomes, strict=True) if error}
    delivered = [target for target, _ in sends if target not in failed]
    await audit.record_alert(notice, delivered, failed)


async def _with_retries(target: str, send: Callable[[], None], notice: Notice) -> str:
    """Send until it works or ``ATTEMPTS`` tries failed; the last error, or "" once sent."""
    what = f"{notice.status} {notice.alert.rule} on {notice.queue!r}"
    pause = FIRST_PAUSE_S
    for attempt in range(1, ATTEMPTS + 1):
        try:
            await asyncio.to_thread(send)
        except Refused as error:
            log.error("alerts: %s refused %s for good: %s", target, what, error)
            return str(error)
        except Exception as error:  # the network, SMTP, a 5xx: worth another try
            if attempt == ATTEMPTS:
                log.error("alerts: gave up telling %s to %s: %s", what, target, error)
                return str(error) or type(error).__name__
            log.warning(
                "alerts: telling %s to %s failed (try %d of %d), again in %.1f s: %s",
                what,
                target,
                attempt,
                ATTEMPTS,
                pause,
                error,
            )
            await asyncio.sleep(pause)
            pause *= 2
        else:
            log.info("alerts: told %s to %s", what, target)
            return ""
    return "not sent"  # not reached: the loop returns


def _email(notice: Notice, settings: DeliverySettings) -> None:
    with translation.override(django_settings.LANGUAGE_CODE):
        subject = alert_messages.email_subject(notice)
        body = alert_messages.email_body(notice, settings.link_base)
    send_mail(
        subject,
        body,
        None,  # DEFAULT_FROM_EMAIL
        list(settings.email_to),
    )


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
        with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:  # noqa: S310
            response.read(65536)
    except urllib.error.HTTPError as error:
        if error.code == 429 or error.code >= 500:
            raise
        raise Refused(f"HTTP {error.code}") from None


def _shown(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
