"""The cancel request as published and read: its channel, its reason, stray messages, and the
listener's routing of a request to the worker of its queue."""

from __future__ import annotations

import json
import time

import pytest

from queues.actions.cancel_requests import CancelRequest, channel, decode, reason_for
from queues.reads.keys import QueueRef
from queues.runner.job_loop.cancel_listener import CancelListener


def test_the_channel_is_the_queues_own() -> None:
    assert channel(QueueRef("bull", "mail", "default")) == "bull:mail:bullpen:cancel"
    assert channel(QueueRef("tenant:7", "mail", "default")) == "tenant:7:mail:bullpen:cancel"


def test_the_reason_names_who_and_keeps_the_note_short_and_on_one_line() -> None:
    assert reason_for("alice") == "Cancelled by alice from Bullpen"
    assert reason_for("alice", "  wrong\n input ") == "Cancelled by alice from Bullpen: wrong input"
    assert len(reason_for("a", "x" * 2000)) == len("Cancelled by a from Bullpen: ") + 500


def test_a_request_reads_back_as_written() -> None:
    request = CancelRequest("42", "alice", "Cancelled by alice from Bullpen", True, 1_000)
    assert decode(request.encode()) == request
    assert json.loads(request.encode())["jobId"] == "42"
    assert request.expired(1_001) and not request.expired(1_000)


@pytest.mark.parametrize(
    "message",
    [
        b"\xff\xfe",
        "not json",
        "[1, 2]",
        '{"by": "alice", "until": 1}',
        '{"jobId": "", "by": "alice", "until": 1}',
        '{"jobId": "1", "by": "alice", "until": "soon"}',
        '{"jobId": "1", "by": "alice", "until": true}',
        '{"jobId": "1", "by": "alice", "until": 1, "retry": "yes"}',
    ],
)
def test_a_stray_message_is_no_request(message: str | bytes) -> None:
    assert decode(message) is None


def test_a_request_without_reason_gets_the_usual_one() -> None:
    found = decode('{"jobId": "1", "by": "bob", "until": 5}')
    assert found == CancelRequest("1", "bob", "Cancelled by bob from Bullpen", False, 5)


class Worker:
    """What the listener needs of a worker: its queue's name and ``cancelJob``."""

    def __init__(self, name: str, running: set[str]) -> None:
        self.name = name
        self.running = running
        self.asked: list[tuple[str, str | None, bool]] = []

    def cancelJob(self, job_id: str, reason: str | None = None, retry: bool = False) -> bool:
        self.asked.append((job_id, reason, retry))
        return job_id in self.running


def test_the_listener_hands_a_request_to_its_queues_worker_only_while_it_holds() -> None:
    mail, sms = Worker("mail", {"7"}), Worker("sms", set())
    workers = {"bull:mail:bullpen:cancel": mail, "bull:sms:bullpen:cancel": sms}
    listener = CancelListener(None, workers)  # type: ignore[arg-type]  # hear() needs no Redis
    soon = int(time.time() * 1000) + 60_000
    request = CancelRequest("7", "alice", "Cancelled by alice from Bullpen", False, soon)
    assert listener.hear("bull:mail:bullpen:cancel", request.encode()) is True
    assert mail.asked == [("7", "Cancelled by alice from Bullpen", False)] and sms.asked == []
    assert listener.hear("bull:other:bullpen:cancel", request.encode()) is False
    assert listener.hear("bull:mail:bullpen:cancel", "garbage") is False
    late = CancelRequest("7", "alice", "Cancelled by alice from Bullpen", False, soon - 120_000)
    assert listener.hear("bull:mail:bullpen:cancel", late.encode()) is False
    assert len(mail.asked) == 1  # an expired request reaches no worker
