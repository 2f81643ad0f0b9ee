"""The Node.js BullMQ peer (tests/interop/peer.mjs), as the tests call it.

Loading BullMQ costs a one-shot ``node peer.mjs`` most of its time (about a CPU-second), so a
test process runs one ``peer.mjs serve`` and sends it every subcommand; the few that change the
whole Node process (a clock set back, a CPU measurement) still get a process of their own.
"""

from __future__ import annotations

import atexit
import itertools
import json
import subprocess
import tempfile
import threading
from typing import IO, Any

from tests.support.paths import ROOT

PEER = ROOT / "tests" / "interop" / "peer.mjs"
# Subcommands and flags that would change every other subcommand running in the same process.
OWN_PROCESS_COMMANDS = frozenset({"bench-work"})
OWN_PROCESS_FLAGS = frozenset({"--clock-behind-ms"})


class _Answer:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.body: dict[str, Any] = {}


class PeerServer:
    """One long-lived ``peer.mjs serve``; thread-safe (tests call the peer from threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.waiting: dict[int, _Answer] = {}
        self.process: subprocess.Popen[str] | None = None
        self.stderr: IO[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.process is not None and self.process.poll() is None:
            return self.process
        self.stderr = tempfile.TemporaryFile("w+")  # lives as long as the server
        self.process = subprocess.Popen(
            ["node", str(PEER), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            text=True,
        )
        threading.Thread(target=self._read, args=(self.process,), daemon=True).start()
        return self.process

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            body = json.loads(line)
            with self.lock:
                answer = self.waiting.pop(body["id"], None)
            if answer is not None:
                answer.body = body
                answer.done.set()
        # The server ended: whoever still waits is told so rather than left to time out.
        with self.lock:
            left, self.waiting = self.waiting, {}
        for answer in left.values():
            answer.body = {"ok": False, "error": f"the peer server ended ({process.wait()})"}
            answer.done.set()

    def run(self, argv: list[str], timeout: float) -> dict[str, Any]:
        answer = _Answer()
        with self.lock:
            process = self._start()
            request_id = next(self.ids)
            self.waiting[request_id] = answer
            assert process.stdin is not None
            process.stdin.write(json.dumps({"id": request_id, "argv": argv}) + "\n")
            process.stdin.flush()
        if not answer.done.wait(timeout):
            with self.lock:
                self.waiting.pop(request_id, None)
            raise subprocess.TimeoutExpired(["peer.mjs", *argv], timeout)
        return answer.body

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


_server = PeerServer()
atexit.register(_server.stop)


class Peer:
    """The Node.js BullMQ peer (tests/interop/peer.mjs)."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url

    def connection_flags(self) -> list[str]:
        """How the peer reaches Redis (a URL here; through a sentinel in test_sentinel.py)."""
        return ["--redis", self.redis_url]

    def __call__(self, command: str, *args: str, timeout: float = 60) -> Any:
        argv = [command, *self.connection_flags(), *args]
        if command in OWN_PROCESS_COMMANDS or OWN_PROCESS_FLAGS.intersection(args):
            return self._own_process(argv, timeout)
        body = _server.run(argv, timeout)
        if not body["ok"]:
            raise AssertionError(f"peer {command} failed: {body['error'][-2000:]}")
        return body["result"]

    def _own_process(self, argv: list[str], timeout: float) -> Any:
        result = subprocess.run(
            ["node", str(PEER), *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise AssertionError(f"peer {argv[0]} failed: {result.stderr[-2000:]}")
        return json.loads(result.stdout)


class PostgresPeer(Peer):
    """The same peer on BullMQ's PostgreSQL store (``createPostgresBackend``, migrating the
    schema on first use as an application's own BullMQ would)."""

    def __init__(self, postgres_url: str) -> None:
        super().__init__(postgres_url)
        self.postgres_url = postgres_url

    def connection_flags(self) -> list[str]:
        return ["--postgres", self.postgres_url]
