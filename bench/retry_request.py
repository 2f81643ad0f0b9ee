"""One retry-all on one server: the request each dashboard takes, the server's memory and the
Redis commands around it, and whether every job moved."""

from __future__ import annotations

import base64
import http.client
import json
import time
from dataclasses import dataclass, field

import redis as redis_py
from redis_commands import calls_diff, command_calls
from retry_memory import RssSampler, proc_status_kb, reset_peak_rss
from servers import http_get

SERVER_TITLES = {"bullboard": "Bull Board", "bullpen": "Bullpen"}
# One queue per server, so each retry-all starts from the same N failed jobs.
QUEUES = {"bullboard": "bench-18", "bullpen": "bench-19"}

USERNAME = "bench"
PASSWORD = "bench-pass"  # noqa: S105  (the throw-away login of the bench server)

READY_PATHS = {"bullboard": "/api/queues", "bullpen": "/queues/api/queues/"}
RETRY_REQUESTS = {
    "bullboard": ("PUT", "/api/queues/{queue}/retry/failed"),
    "bullpen": ("POST", "/queues/api/queues/{queue}/retry/?state=failed"),
}


@dataclass
class Run:
    server: str
    queue: str
    pid: int
    request: str
    status: int = 0
    answer: str = ""
    duration_s: float = 0.0
    rss_before_kb: int = 0
    peak_sampled_kb: int = 0
    peak_hwm_kb: int | None = None
    rss_after_kb: int = 0
    samples: int = 0
    redis_cmds: int = 0
    redis_breakdown: dict[str, int] = field(default_factory=dict)
    failed_left: int = -1
    waiting: int = -1
    problems: list[str] = field(default_factory=list)

    @property
    def peak_kb(self) -> int:
        return max(self.peak_sampled_kb, self.peak_hwm_kb or 0, self.rss_before_kb)


def auth_headers(server: str) -> dict[str, str]:
    if server != "bullpen":
        return {}
    token = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def http_call(
    port: int, method: str, path: str, headers: dict[str, str], timeout: float
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, headers={"Content-Length": "0", **headers})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def follow_action(
    port: int, accepted: bytes, headers: dict[str, str], deadline: float
) -> tuple[int, bytes]:
    """Poll a 202's status URL until the action has finished; its last status."""
    url = json.loads(accepted)["statusUrl"]
    while True:
        status, body = http_call(port, "GET", url, headers, max(1.0, deadline - time.monotonic()))
        if status != 200 or json.loads(body).get("finished") or time.monotonic() > deadline:
            return status, body
        time.sleep(0.02)


def retry_all(
    server: str,
    port: int,
    pid: int,
    queue: str,
    count: int,
    r: redis_py.Redis,
    prefix: str,
    timeout: float,
    settle: float,
) -> Run:
    method, path_t = RETRY_REQUESTS[server]
    path = path_t.format(queue=queue)
    run = Run(server, queue, pid, f"{method} {path}")
    headers = auth_headers(server)

    # Warm the server up (first request, lazy imports, connections), then let it settle.
    for _ in range(3):
        status, _body = http_get(port, READY_PATHS[server], headers=headers)
        if status != 200:
            run.problems.append(f"warm-up GET {READY_PATHS[server]}: HTTP {status}")
    time.sleep(settle)
    run.rss_before_kb = proc_status_kb(pid).get("VmRSS", 0)
    hwm_reset = reset_peak_rss(pid)

    sampler = RssSampler(pid)
    before_calls = command_calls(r)
    sampler.start()
    t0 = time.monotonic()
    try:
        run.status, body = http_call(port, method, path, headers, timeout)
        if run.status == 202:  # Bullpen runs it in the background: follow it to its end
            run.status, body = follow_action(port, body, headers, t0 + timeout)
    except OSError as exc:
        run.status, body = 0, str(exc).encode()
    run.duration_s = time.monotonic() - t0
    sampler.stop()
    after_calls = command_calls(r)
    run.peak_sampled_kb = sampler.peak_kb
    run.samples = sampler.samples
    if hwm_reset:
        run.peak_hwm_kb = proc_status_kb(pid).get("VmHWM")
    else:
        run.problems.append("could not reset VmHWM: peak is the sampled VmRSS only")
    diff = calls_diff(before_calls, after_calls)
    run.redis_breakdown = dict(sorted(diff.items(), key=lambda kv: -kv[1]))
    run.redis_cmds = sum(diff.values())
    run.answer = body.decode(errors="replace")[:300]

    time.sleep(settle)
    run.rss_after_kb = proc_status_kb(pid).get("VmRSS", 0)

    # What the answer says, and what Redis says.
    if run.status != 200:
        run.problems.append(f"HTTP {run.status}: {run.answer[:200]}")
    else:
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        reported = None
        if isinstance(data, dict):
            reported = data.get("count") if server == "bullpen" else data.get("retried")
        if reported != count:
            run.problems.append(f"answer reports {reported!r} jobs, expected {count}")
    run.failed_left = int(r.zcard(f"{prefix}:{queue}:failed"))
    run.waiting = int(r.llen(f"{prefix}:{queue}:wait"))
    if run.failed_left != 0:
        run.problems.append(f"{run.failed_left} jobs still failed")
    if run.waiting != count:
        run.problems.append(f"{run.waiting} jobs waiting, expected {count}")
    return run
