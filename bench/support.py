"""What the bench scripts share: a throw-away redis-server on a free port."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(tmp: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server of its own (no persistence, files in ``tmp``), answering; and its URL.
    ``extra``: more of redis-server's options, e.g. ``--slowlog-log-slower-than 500``."""
    import redis

    port = free_port()
    binary = shutil.which("redis-server") or "redis-server"
    options = ["--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    command = [binary, *options, "--dir", str(tmp), *extra]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 20
    while True:
        try:
            redis.Redis.from_url(url).ping()
            return proc, url
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("redis-server did not start")
            time.sleep(0.05)
