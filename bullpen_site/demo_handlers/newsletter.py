"""Newsletter e-mail through Django's e-mail backends, with an idempotent id per user, template
and day (a second enqueue the same day is a no-op) and a weekly digest scheduler.

The backend is the site's ``EMAIL_BACKEND`` when it sets one (tests: locmem); otherwise the
console backend, so that a demo never sends real mail. A mailbox that does not exist is not
retried: the job goes to the dead-letter queue.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from bullmq import UnrecoverableError
from django.conf import settings
from django.core import mail

from queues.runner import Schedule, SyncJobContext, business_job_id, job_handler

CONSOLE_BACKEND = "django.core.mail.backends.console.EmailBackend"
FROM = "Bullpen demo <newsletter@example.com>"

WEEKLY_DIGEST = Schedule(
    id="weekly-digest",
    name="digest",
    cron="0 9 * * 1",  # Mondays at 09:00...
    tz="Europe/Paris",  # ...in Paris, summer or winter
    data={"template": "digest", "to": "team@example.com"},
)

TEMPLATES = {
    "weekly": ("Your week at ACME", "Hello {name},\n\nHere is what happened this week.\n"),
    "digest": ("Weekly digest", "Hello team,\n\nThe digest of the week is attached.\n"),
    "welcome": ("Welcome to ACME", "Hello {name},\n\nThanks for joining us.\n"),
}


class MailboxMissing(UnrecoverableError):  # type: ignore[misc]
    """The address bounced for good: sending again will not help."""


def newsletter_job_id(user: int | str, template: str, day: date) -> str:
    """``email.<user>.<template>.<day>``: one e-mail per user, template and day."""
    return business_job_id("email", user, template, day)


def email_backend() -> str | None:
    if settings.is_overridden("EMAIL_BACKEND") or hasattr(mail, "outbox"):  # type: ignore[misc]
        return None  # the site's choice (or the test run's locmem)
    return CONSOLE_BACKEND


@job_handler("newsletter", concurrency=5, schedules=[WEEKLY_DIGEST])
def send_newsletter(payload: dict[str, Any], ctx: SyncJobContext) -> dict[str, Any]:
    to = str(payload["to"])
    template = str(payload.get("template", "weekly"))
    if template not in TEMPLATES:
        raise UnrecoverableError(f"no e-mail template {template!r}")
    if to.endswith(".invalid"):
        raise MailboxMissing(f"550 5.1.1 <{to}>: mailbox does not exist")
    subject, body = TEMPLATES[template]
    text = body.format(name=payload.get("name") or to.split("@")[0])
    connection = mail.get_connection(backend=email_backend())
    sent = mail.EmailMessage(subject, text, FROM, [to], connection=connection).send()
    ctx.log(f"sent {template!r} to {to}")
    return {"to": to, "template": template, "sent": sent}
