"""wrk runs: latency percentiles and requests per second of one URL."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass


@dataclass
class WrkResult:
    p50_ms: float
    p99_ms: float
    rps: float
    requests: int
    errors: str = ""


_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def _to_ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not m:
        raise ValueError(f"bad wrk latency {text!r}")
    return float(m.group(1)) * _UNITS_MS[m.group(2)]


def parse_wrk(out: str) -> WrkResult:
    def pct(p: str) -> float:
        m = re.search(rf"^\s*{p}%\s+(\S+)\s*$", out, re.M)
        if not m:
            raise ValueError(f"no {p}% line in wrk output:\n{out}")
        return _to_ms(m.group(1))

    m_rps = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.M)
    m_req = re.search(r"^\s*(\d+) requests in", out, re.M)
    if not (m_rps and m_req):
        raise ValueError(f"unexpected wrk output:\n{out}")
    rps = float(m_rps.group(1))
    requests = int(m_req.group(1))
    errors = []
    m = re.search(r"Socket errors: (.*)", out)
    if m:
        errors.append("socket errors: " + m.group(1).strip())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors.append(f"non-2xx: {m.group(1)}")
    return WrkResult(pct("50"), pct("99"), rps, requests, "; ".join(errors))


def run_wrk(url: str, connections: int, threads: int, duration: float) -> WrkResult:
    argv = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(duration))}s",
        "--timeout",
        "60s",
        "--latency",
        url,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 120)
    if proc.returncode != 0:
        raise SystemExit(f"wrk failed ({proc.returncode}): {proc.stderr or proc.stdout}")
    return parse_wrk(proc.stdout)
