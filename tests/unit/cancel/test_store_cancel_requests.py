"""The cancel request as a PostgreSQL store carries it (``NOTIFY bullpen_cancel``): the queue and
schema beside the request, stray payloads, and the store listener's routing to the worker of
its queue in its own schema only."""

from __future__ import annotations

import json
import time

import pytest

from queues.actions.cancel_requests import POSTGRES_CHANNEL, CancelRequest, decode_for_store
from queues.postgres.urls import parse_postgres_url
from queues.runner.postgres.cancel_listener import PostgresCancelListener
from tests.unit.cancel.test_cancel_requests import Worker


def test_the_payload_names_the_queue_and_schema_beside_the_request() -> None:
    request = CancelRequest("42", "alice", "Cancelled by alice from Bullpen: stuck", True, 9)
    payload = request.encode_for_store("mail", "jobs")
    doc = json.loads(payload)
    assert (doc["queue"], doc["schema"], doc["jobId"], doc["retry"]) == ("mail", "jobs", "42", True)
    assert decode_for_store(payload) == ("mail", "jobs", request)
    # One channel for every queue: a queue's name could pass PostgreSQL's 63 bytes.
    assert POSTGRES_CHANNEL == "bullpen_cancel"


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        '{"jobId": "1", "by": "bob", "until": 5}',  # no queue
        '{"queue": "", "jobId": "1", "by": "bob", "until": 5}',
        '{"queue": "mail", "schema": 3, "jobId": "1", "by": "bob", "until": 5}',
        '{"queue": "mail", "by": "bob", "until": 5}',  # no job
    ],
)
def test_a_stray_payload_is_no_request(payload: str) -> None:
    assert decode_for_store(payload) is None


def test_a_payload_without_schema_is_for_bullmqs_default() -> None:
    found = decode_for_store('{"queue": "mail", "jobId": "1", "by": "bob", "until": 5}')
    assert found is not None and found[:2] == ("mail", "bullmq")


def test_the_store_listener_hands_a_request_to_its_queues_worker_in_its_schema() -> None:
    mail, sms = Worker("mail", {"7"}), Worker("sms", set())
    url = parse_postgres_url("postgresql://u@db:5432/app?schema=jobs")
    listener = PostgresCancelListener(url, {"mail": mail, "sms": sms})
    soon = int(time.time() * 1000) + 60_000
    request = CancelRequest("7", "alice", "Cancelled by alice from Bullpen", False, soon)
    assert listener.hear(request.encode_for_store("mail", "jobs")) is True
    assert mail.asked == [("7", "Cancelled by alice from Bullpen", False)] and sms.asked == []
    assert listener.hear(request.encode_for_store("mail", "bullmq")) is False  # another schema
    assert listener.hear(request.encode_for_store("other", "jobs")) is False
    assert listener.hear("garbage") is False
    late = CancelRequest("7", "alice", "Cancelled by alice from Bullpen", False, soon - 120_000)
    assert listener.hear(late.encode_for_store("mail", "jobs")) is False
    assert len(mail.asked) == 1  # an expired request reaches no worker
