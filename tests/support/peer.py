"""Helpers that several test modules share.

Moved here from ``tests.conftest``.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from tests.support.paths import ROOT

PEER = ROOT / "tests" / "interop" / "peer.mjs"


class Peer:
    """The Node.js BullMQ peer (tests/interop/peer.mjs)."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url

    def connection_flags(self) -> list[str]:
        """How the peer reaches Redis (a URL here; through a sentinel in test_sentinel.py)."""
        return ["--redis", self.redis_url]

    def __call__(self, command: str, *args: str, timeout: float = 60) -> Any:
        result = subprocess.run(
            ["node", str(PEER), command, *self.connection_flags(), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"peer {command} failed: {result.stderr[-2000:]}")
        return json.loads(result.stdout)
