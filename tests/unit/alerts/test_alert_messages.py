"""What an alert notice says, by webhook and by e-mail: the fields, the link to the queue page,
and untrusted text (queue names, failure signatures) kept inert (pure logic)."""

from __future__ import annotations

from dashboard.alerts import messages
from queues.alerts.state import FIRING, RESOLVED, Notice
from queues.alerts.thresholds import Alert

BASE = "https://ops.example.com/"


def test_the_webhook_body_has_what_a_receiver_needs() -> None:
    notice = Notice(FIRING, "mail", Alert("waiting", 12_345, 10_000))
    body = messages.webhook_body(notice, BASE)
    assert {k: v for k, v in body.items() if k != "text"} == {
        "id": notice.id,  # a receiver drops a notice it already has
        "status": "firing",
        "queue": "mail",
        "connection": "default",
        "rule": "waiting",
        "value": 12_345,
        "threshold": 10_000,
        "link": "https://ops.example.com/queues/q/mail/",
    }
    assert body["text"] == (
        "Alert on mail: 12,345 jobs waiting, more than 10,000\n"
        "<https://ops.example.com/queues/q/mail/|Open mail in Bullpen>"
    )


def test_a_resolved_notice_says_what_it_was() -> None:
    notice = Notice(RESOLVED, "mail", Alert("failed_last_hour", 150, 100))
    body = messages.webhook_body(notice, BASE)
    assert body["status"] == "resolved"
    assert body["text"].startswith("Resolved on mail: failed_last_hour is back within")
    assert "It was: 150 jobs failed in the last hour, more than 100" in body["text"]
    assert "It was: 150 jobs failed" in messages.email_body(notice, BASE)


def test_untrusted_text_stays_text() -> None:
    reason = "<!channel> <https://evil.example|click> & more"
    notice = Notice(FIRING, "x<y>&z", Alert("new_failure_signatures", 1, 0, (reason,)))
    body = messages.webhook_body(notice, BASE)
    assert body["signatures"] == [reason]  # the JSON field is the text itself
    text = body["text"]
    assert "<!channel>" not in text and "<https://evil" not in text
    assert "&lt;!channel&gt; &lt;https://evil.example|click&gt; &amp; more" in text
    assert "x&lt;y&gt;&amp;z" in text
    # The queue name is a path segment of the link, escaped by reverse().
    assert body["link"] == "https://ops.example.com/queues/q/x%3Cy%3E&z/"


def test_an_e_mail_subject_is_one_line() -> None:
    notice = Notice(FIRING, "mail\r\nBcc: someone@example.com", Alert("delayed", 2, 1))
    subject = messages.email_subject(notice)
    assert "\n" not in subject and "\r" not in subject
    assert subject.startswith("[Bullpen] Alert on mail Bcc: someone@example.com: 2 jobs delayed")


def test_without_a_base_the_link_is_the_path() -> None:
    notice = Notice(FIRING, "mail", Alert("waiting", 2, 1))
    assert messages.link(notice, "") == "/queues/q/mail/"
