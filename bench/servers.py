"""Where the bench lives, and how its scripts start, reach and stop the servers they measure:
each process in its own group, on a free port in a given range, answering HTTP."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Collection
from pathlib import Path

import redis as redis_py

Popen = subprocess.Popen[bytes]

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
NODE_DIR = BENCH_DIR / "node"
OUT_DIR = BENCH_DIR / "out"


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Processes:
    """Processes started by the benchmark; each in its own process group."""

    def __init__(self) -> None:
        self.procs: list[tuple[str, Popen]] = []

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
    ) -> Popen:
        out = open(log_path, "wb") if log_path else None
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out if out else subprocess.DEVNULL,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            if out:
                out.close()
        self.procs.append((name, proc))
        return proc

    def stop_all(self) -> None:
        for name, proc in reversed(self.procs):
            stop_group(proc, name)
        self.procs.clear()


def stop_group(proc: Popen, name: str, grace: float = 10.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log(f"{name} did not stop after SIGTERM; killing")
    # The leader may be gone while children of its group live on.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def free_port(lo: int, hi: int, exclude: Collection[int] = ()) -> int:
    for port in range(lo, hi + 1):
        if port in exclude:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise SystemExit(f"no free port in {lo}-{hi}")


def parse_range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def http_get(
    port: int, path: str, timeout: float = 60.0, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_http(
    port: int,
    path: str,
    proc: Popen,
    name: str,
    timeout: float,
    log_path: Path,
    headers: dict[str, str] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
            raise SystemExit(
                f"{name} exited with code {proc.returncode} before it answered:\n{tail}"
            )
        try:
            status, _ = http_get(port, path, timeout=30, headers=headers)
            if status == 200:
                return
            last = f"HTTP {status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.3)
    tail = log_path.read_text(errors="replace")[-3000:] if log_path.exists() else ""
    raise SystemExit(f"{name} not ready on port {port} after {timeout:.0f}s ({last}):\n{tail}")


def start_redis_server(
    procs: Processes,
    port: int,
    folder: Path,
    log_path: Path,
    *,
    name: str = "redis-server",
    max_clients: int | None = None,
) -> Popen:
    """A throw-away ``redis-server`` on 127.0.0.1:``port`` that keeps nothing on disk, once it
    answers; the bench stops with its log's tail when it does not within 20 s."""
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1"]
    argv += ["--save", "", "--appendonly", "no", "--dir", str(folder)]
    if max_clients is not None:
        argv += ["--maxclients", str(max_clients)]
    proc = procs.start(name, argv, log_path=log_path)
    deadline = time.monotonic() + 20
    while True:
        try:
            redis_py.Redis(port=port).ping()
            return proc
        except redis_py.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise SystemExit(f"redis-server did not start:\n{tail}") from None
            time.sleep(0.1)


def start_bullboard(
    procs: Processes,
    redis_url: str,
    prefix: str,
    port: int,
    log_path: Path,
    *,
    queues: int | None = None,
) -> Popen:
    """Bull Board 9.10 on ``port`` (node/bullboard.mjs) over the queues under ``prefix``
    (``queues``: only the first that many of the bench's own); the caller waits for it."""
    argv = ["node", str(NODE_DIR / "bullboard.mjs"), "--redis", redis_url, "--prefix", prefix]
    argv += ["--port", str(port)]
    if queues is not None:
        argv += ["--queues", str(queues)]
    return procs.start("bull board", argv, cwd=NODE_DIR, log_path=log_path)
