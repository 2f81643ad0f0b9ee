"""A webhook receiver on a local HTTP server for the alert tests: it records each POST and
answers what a test queues for its path; and an address with nobody listening there yet."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver:
    """A webhook receiver: records each POST, answers the statuses queued in ``answers`` for
    its path (then 200), with a ``Location`` from ``locations``; a path in ``hanging`` answers
    only once ``release`` is set."""

    def __init__(self, port: int = 0) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[tuple[str, int]] = []
        self.answers: dict[str, list[int]] = {}
        self.locations: dict[str, str] = {}
        self.hanging: set[str] = set()
        self.hung = 0  # requests waiting for release now
        self.most_hung = 0
        self.release = threading.Event()
        lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                body = json.loads(self.rfile.read(length))
                if self.path in receiver.hanging:
                    with lock:
                        receiver.hung += 1
                        receiver.most_hung = max(receiver.most_hung, receiver.hung)
                    receiver.release.wait(120)
                    with lock:
                        receiver.hung -= 1
                queued = receiver.answers.get(self.path) or [200]
                status = queued.pop(0)
                receiver.bodies.append(body)
                receiver.statuses.append((self.path, status))
                self.send_response(status)
                if self.path in receiver.locations:
                    self.send_header("Location", receiver.locations[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> Receiver:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


class AwayReceiver:
    """A receiver's address with nobody listening there, until ``start()``."""

    def __init__(self) -> None:
        away = Receiver()
        away.server.server_close()
        self.port = int(away.server.server_address[1])
        self.url = away.url
        self.started: list[Receiver] = []

    def start(self) -> Receiver:
        self.started.append(Receiver(self.port).start())
        return self.started[-1]
