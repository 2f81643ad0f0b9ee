"""A server process's memory, from /proc: VmRSS and VmHWM, the peak reset and sampled while a
request runs; and which process of a started group is the server."""

from __future__ import annotations

import threading
from pathlib import Path

from servers import Popen


def proc_status_kb(pid: int, fields: tuple[str, ...] = ("VmRSS", "VmHWM")) -> dict[str, int]:
    """``/proc/<pid>/status`` memory lines, in kB (missing when the process is gone)."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for raw in f:
                name, _, rest = raw.decode("ascii", "replace").partition(":")
                if name in fields:
                    out[name] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return out


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0; the process must be ours)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class RssSampler(threading.Thread):
    """Reads VmRSS of one process every ``interval`` seconds, keeps the largest."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_kb = 0
        self.samples = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            rss = proc_status_kb(self.pid, ("VmRSS",)).get("VmRSS")
            if rss is not None:
                self.samples += 1
                self.peak_kb = max(self.peak_kb, rss)
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process in process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # "pid (comm) state ppid pgrp ..."; comm may hold spaces and parentheses.
            after = stat[stat.rindex(")") + 2 :].split()
            if int(after[2]) != pgid:
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        members.append((int(entry.name), cmdline.strip()))
    return members


def server_pid(proc: Popen, needle: str) -> int:
    """The pid of the process in ``proc``'s group whose command line contains ``needle``
    (``./run serve`` execs daphne, so it is usually ``proc.pid`` itself)."""
    matches = [pid for pid, cmd in group_members(proc.pid) if needle in cmd]
    if proc.pid in matches:
        return proc.pid
    if matches:
        return min(matches)
    raise SystemExit(f"no process with {needle!r} in its command line in group {proc.pid}")
