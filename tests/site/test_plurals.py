"""Counts agree with their nouns: "1 key", "1 failed job", "2 keys"."""

from __future__ import annotations

import asyncio
import base64
import html

import pytest
from django.test import AsyncClient

from bullpen_site.demo_handlers import documents
from dashboard.templatetags.bullpen import json_tree
from tests.support.demo_recorder import AsyncRecorder
from tests.support.peer import Peer


def test_json_tree_counts() -> None:
    assert "1 key</span>" in json_tree({"a": 1})
    assert "2 keys</span>" in json_tree({"a": 1, "b": 2})
    assert "1 item</span>" in json_tree([1])
    assert "3 items</span>" in json_tree([1, 2, 3])


async def test_one_page_document_log() -> None:
    recorder = AsyncRecorder(attempt=2)  # a retry: the simulated upstream is never busy
    await documents.analyze_document({"document": "memo.pdf", "pages": 1}, recorder)
    assert recorder.lines[0].endswith("sending memo.pdf (1 page)")


@pytest.mark.django_db(transaction=True)  # signing in asks axes' table about lockouts
async def test_one_failed_job(client: AsyncClient, peer: Peer) -> None:
    await asyncio.to_thread(peer, "add", "--queue", "mail", "--name", "n", "--data", "{}")
    await asyncio.to_thread(peer, "work", "--queue", "mail", "--fail")
    # The buttons and their confirmations are shown to those who may act.
    operator = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}
    groups = html.unescape(
        (await client.get("/queues/q/mail/groups/", headers=operator)).content.decode()
    )
    assert "1 group from the newest 1 of 1 failed job<" in groups
    assert "Retry the 1 job of this group?" in groups
    assert "Remove the 1 job of this group?" in groups
    page = html.unescape(
        (await client.get("/queues/q/mail/?state=failed", headers=operator)).content.decode()
    )
    assert "Retry the 1 failed job of mail?" in page
    assert " 1 jobs" not in groups + page
