"""What an alert notice says: the webhook's JSON (with a Slack-compatible ``text``) and the
e-mail's subject and body. Queue names and failure signatures come from job data and queue
keys: untrusted, so escaped for Slack's markup and kept out of e-mail headers' line breaks."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse

from queues.alert_state import FIRING, Notice
from queues.alerts import Alert

# The Redis connection a queue lives on (one per deployment today).
CONNECTION = "default"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def link(notice: Notice, base: str) -> str:
    """The queue page: ``base`` (the site's public origin) plus the page's path; the path
    alone when no base is configured."""
    return base.rstrip("/") + reverse("bullpen:queue", args=[notice.queue])


# A rule's short name on a badge; its full text (describe) is the badge's title.
_LABELS = {
    "waiting": "waiting",
    "failed_last_hour": "failed in the last hour",
    "delayed": "delayed",
    "active_at_limit_seconds": "seconds at the concurrency limit",
    "new_failure_signatures": "new failure signatures",
}


def label(rule: str) -> str:
    return _LABELS.get(rule, rule.replace("_", " "))


def describe(alert: Alert) -> str:
    """What the rule measured, in words ("12,345 jobs waiting, more than 10,000")."""
    value, limit = f"{alert.value:,}", f"{alert.threshold:,}"
    if alert.rule == "waiting":
        return f"{value} jobs waiting, more than {limit}"
    if alert.rule == "failed_last_hour":
        return f"{value} jobs failed in the last hour, more than {limit}"
    if alert.rule == "delayed":
        return f"{value} jobs delayed, more than {limit}"
    if alert.rule == "active_at_limit_seconds":
        return f"active at its concurrency limit for {value} s, more than {limit} s"
    if alert.rule == "new_failure_signatures":
        plural = "s" if alert.value != 1 else ""
        return f"{value} new failure signature{plural} in the last hour, more than {limit}"
    return f"{alert.rule} is {value}, more than {limit}"


def headline(notice: Notice) -> str:
    """One line, plain text: what happened on which queue."""
    if notice.status == FIRING:
        return f"Alert on {notice.queue}: {describe(notice.alert)}"
    return f"Resolved on {notice.queue}: {notice.alert.rule} is back within its threshold"


def slack_text(notice: Notice, url: str) -> str:
    """``headline`` in Slack's markup, with the signatures and a link to the queue page."""
    lines = [_slack(headline(notice))]
    if notice.status == FIRING:
        lines += [f"• `{_slack(signature)}`" for signature in notice.alert.signatures]
    else:
        lines.append(_slack(f"It was: {describe(notice.alert)}"))
    lines.append(f"<{_slack(url)}|Open {_slack(notice.queue)} in Bullpen>")
    return "\n".join(lines)


def webhook_body(notice: Notice, base: str) -> dict[str, Any]:
    url = link(notice, base)
    body: dict[str, Any] = {
        "status": notice.status,
        "queue": notice.queue,
        "connection": CONNECTION,
        "rule": notice.alert.rule,
        "value": notice.alert.value,
        "threshold": notice.alert.threshold,
        "link": url,
        "text": slack_text(notice, url),
    }
    if notice.alert.signatures:
        body["signatures"] = list(notice.alert.signatures)
    return body


def email_subject(notice: Notice) -> str:
    return _CONTROL.sub(" ", f"[Bullpen] {headline(notice)}")[:200]


def email_body(notice: Notice, base: str) -> str:
    lines = [headline(notice), ""]
    if notice.status == FIRING:
        lines += [f"  - {signature}" for signature in notice.alert.signatures]
    else:
        lines.append(f"It was: {describe(notice.alert)}")
    lines += [
        "",
        f"Queue: {notice.queue} (connection {CONNECTION})",
        f"Rule: {notice.alert.rule}, value {notice.alert.value}, "
        f"threshold {notice.alert.threshold}",
        f"Open: {link(notice, base)}",
    ]
    return "\n".join(lines) + "\n"


def _slack(text: str) -> str:
    # Slack reads &, < and > as markup (links, mentions): escaped, job text stays text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
