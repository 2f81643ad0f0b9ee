"""The live benchmark's processes: their pids, RSS and CPU from /proc, the open-file limit, a
throw-away redis-server, and the suspicious lines of a server's log."""

from __future__ import annotations

import os
import re
import resource
import time
from pathlib import Path

from servers import (  # bench/ is not a package: on sys.path from the driver
    Popen,
    Processes,
    start_redis_server,
)

CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_pids(leader: int) -> list[int]:
    """Every live process in the process group ``leader`` leads (the servers run in their own)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == leader:  # pgrp
            pids.append(int(entry))
    return pids


def find_server_pid(proc: Popen, needle: str, timeout: float = 10.0) -> int:
    """The pid of the process in ``proc``'s group whose command line contains ``needle``."""
    deadline = time.monotonic() + timeout
    while True:
        for pid in group_pids(proc.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if needle in cmdline:
                return pid
        if time.monotonic() > deadline:
            raise SystemExit(f"no process with {needle!r} in its command line under {proc.pid}")
        time.sleep(0.2)


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime
    except (OSError, IndexError, ValueError):
        return float("nan")


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])
    return total - idle, total


def raise_fd_limit(need: int) -> str:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < need:
        new = need if hard == resource.RLIM_INFINITY else min(need, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
        soft = new
    if soft != resource.RLIM_INFINITY and soft < need:
        raise SystemExit(f"open-file limit {soft} is below the {need} the run needs (ulimit -n)")
    return str(soft)


def server_log_name(i: int) -> str:
    """The i-th Bullpen process's log name (the first keeps the name of a one-process run)."""
    return "bullpen" if i == 0 else f"bullpen-{i + 1}"


def start_redis(procs: Processes, port: int, tmp: Path, name: str) -> Popen:
    """A throw-away ``redis-server`` on ``port``, answering; its log is ``tmp/<name>.log``."""
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    log_path = tmp / f"{name}.log"
    return start_redis_server(procs, port, folder, log_path, name=name, max_clients=10000)


def scan_log(path: Path) -> tuple[int, list[str]]:
    bad = re.compile(r"Traceback|ERROR|CRITICAL|Exception|WARNING|exception", re.I)
    hits = []
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return 0, []
    for line in text.splitlines():
        # Django's start-up system-check notes (a "WARNINGS:" header and "?: (app.W001) ..."
        # lines) are configuration advice, not run-time trouble.
        if line.strip() == "WARNINGS:" or re.match(r"^\S*: \(\w+\.W\d+\)", line):
            continue
        if bad.search(line):
            hits.append(line.strip())
    return len(hits), hits[:15]
