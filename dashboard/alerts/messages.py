"""What an alert notice says: the webhook's JSON (with a Slack-compatible ``text``) and the
e-mail's subject and body. Queue names and failure signatures come from job data and queue
keys: untrusted, so escaped for Slack's markup and kept out of e-mail headers' line breaks."""

from __future__ import annotations

import re
from typing import Any

from django.urls import reverse
from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_lazy, ngettext

from queues.alerts.state import FIRING, Notice
from queues.alerts.thresholds import Alert
from queues.redis import connections

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def link(notice: Notice, base: str) -> str:
    """The queue page: ``base`` (the site's public origin) plus the page's path; the path
    alone when no base is configured."""
    return base.rstrip("/") + reverse("bullpen:queue", args=[notice.queue])


# A rule's short name on a badge; its full text (describe) is the badge's title.
_LABELS = {
    "waiting": gettext_lazy("waiting"),
    "failed_last_hour": gettext_lazy("failed in the last hour"),
    "delayed": gettext_lazy("delayed"),
    "active_at_limit_seconds": gettext_lazy("seconds at the concurrency limit"),
    "new_failure_signatures": gettext_lazy("new failure signatures"),
    "failure_rate_percent": gettext_lazy("failure rate"),
    "run_p95_ms": gettext_lazy("slow runs (p95)"),
    "wait_p95_ms": gettext_lazy("slow waits (p95)"),
    "oldest_waiting_seconds": gettext_lazy("oldest waiting job"),
    "no_workers_seconds": gettext_lazy("no workers"),
    "stalled_last_hour": gettext_lazy("stalled in the last hour"),
    "scheduler_overdue_seconds": gettext_lazy("scheduler overdue"),
}

# The new rules' texts: what was measured, over which window ("%(window)s" in minutes).
_TEXTS = {
    "failure_rate_percent": gettext_lazy(
        "%(value)s %% of jobs failed in the last %(window)s min, more than %(limit)s %%"
    ),
    "run_p95_ms": gettext_lazy(
        "p95 run time %(value)s ms in the last %(window)s min, more than %(limit)s ms"
    ),
    "wait_p95_ms": gettext_lazy(
        "p95 wait time %(value)s ms in the last %(window)s min, more than %(limit)s ms"
    ),
    "oldest_waiting_seconds": gettext_lazy(
        "the oldest waiting job has waited %(value)s s, more than %(limit)s s"
    ),
    "no_workers_seconds": gettext_lazy(
        "jobs waiting and no worker connected for %(value)s s, more than %(limit)s s"
    ),
    "stalled_last_hour": gettext_lazy(
        "%(value)s jobs stalled in the last %(window)s min, more than %(limit)s"
    ),
    "scheduler_overdue_seconds": gettext_lazy(
        "a job scheduler's run is %(value)s s overdue, more than %(limit)s s"
    ),
}


def label(rule: str) -> str:
    return str(_LABELS.get(rule, rule.replace("_", " ")))


def describe(alert: Alert) -> str:
    """What the rule measured, in words ("12,345 jobs waiting, more than 10,000")."""
    words = {
        "value": number_format(alert.value, force_grouping=True),
        "limit": number_format(alert.threshold, force_grouping=True),
        "rule": alert.rule,
        "window": number_format((alert.window_s or 0) // 60, force_grouping=True),
    }
    if alert.rule in _TEXTS:
        text = str(_TEXTS[alert.rule])
    elif alert.rule == "waiting":
        text = ngettext(
            "%(value)s job waiting, more than %(limit)s",
            "%(value)s jobs waiting, more than %(limit)s",
            alert.value,
        )
    elif alert.rule == "failed_last_hour":
        text = ngettext(
            "%(value)s job failed in the last hour, more than %(limit)s",
            "%(value)s jobs failed in the last hour, more than %(limit)s",
            alert.value,
        )
    elif alert.rule == "delayed":
        text = ngettext(
            "%(value)s job delayed, more than %(limit)s",
            "%(value)s jobs delayed, more than %(limit)s",
            alert.value,
        )
    elif alert.rule == "active_at_limit_seconds":
        text = gettext("active at its concurrency limit for %(value)s s, more than %(limit)s s")
    elif alert.rule == "new_failure_signatures":
        text = ngettext(
            "%(value)s new failure signature in the last hour, more than %(limit)s",
            "%(value)s new failure signatures in the last hour, more than %(limit)s",
            alert.value,
        )
    else:
        text = gettext("%(rule)s is %(value)s, more than %(limit)s")
    return text % words


def headline(notice: Notice) -> str:
    """One line, plain text: what happened on which queue."""
    if notice.status == FIRING:
        return gettext("Alert on %(queue)s: %(what)s") % {
            "queue": notice.queue,
            "what": describe(notice.alert),
        }
    return gettext("Resolved on %(queue)s: %(rule)s is back within its threshold") % {
        "queue": notice.queue,
        "rule": notice.alert.rule,
    }


def slack_text(notice: Notice, url: str) -> str:
    """``headline`` in Slack's markup, with the signatures and a link to the queue page."""
    lines = [_slack(headline(notice))]
    if notice.status == FIRING:
        lines += [f"• `{_slack(signature)}`" for signature in notice.alert.signatures]
    else:
        lines.append(_slack(_it_was(notice)))
    opening = gettext("Open %(queue)s in Bullpen") % {"queue": notice.queue}
    lines.append(f"<{_slack(url)}|{_slack(opening)}>")
    return "\n".join(lines)


def connection_of(notice: Notice) -> str:
    """The Redis connection of the notice's queue (its slug names it when there are several)."""
    return connections.split_slug(notice.queue)[0]


def webhook_body(notice: Notice, base: str) -> dict[str, Any]:
    url = link(notice, base)
    body: dict[str, Any] = {
        "id": notice.id,  # the same on every try: a receiver drops what it already has
        "status": notice.status,
        "queue": notice.queue,
        "connection": connection_of(notice),
        "rule": notice.alert.rule,
        "value": notice.alert.value,
        "threshold": notice.alert.threshold,
        "link": url,
        "text": slack_text(notice, url),
    }
    if notice.alert.signatures:
        body["signatures"] = list(notice.alert.signatures)
    if notice.alert.window_s is not None:
        body["windowSeconds"] = notice.alert.window_s
    return body


def email_subject(notice: Notice) -> str:
    return _CONTROL.sub(" ", f"[Bullpen] {headline(notice)}")[:200]


def email_body(notice: Notice, base: str) -> str:
    lines = [headline(notice), ""]
    if notice.status == FIRING:
        lines += [f"  - {signature}" for signature in notice.alert.signatures]
    else:
        lines.append(_it_was(notice))
    lines += [
        "",
        gettext("Queue: %(queue)s (connection %(connection)s)")
        % {"queue": notice.queue, "connection": connection_of(notice)},
        gettext("Rule: %(rule)s, value %(value)s, threshold %(threshold)s")
        % {
            "rule": notice.alert.rule,
            "value": notice.alert.value,
            "threshold": notice.alert.threshold,
        },
    ]
    if notice.alert.window_s is not None:
        lines.append(gettext("Window: %(seconds)s s") % {"seconds": notice.alert.window_s})
    lines += [
        gettext("Open: %(link)s") % {"link": link(notice, base)},
    ]
    return "\n".join(lines) + "\n"


def _it_was(notice: Notice) -> str:
    return gettext("It was: %(what)s") % {"what": describe(notice.alert)}


def _slack(text: str) -> str:
    # Slack reads &, < and > as markup (links, mentions): escaped, job text stays text.
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
