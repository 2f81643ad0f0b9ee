"""Which of several Bullpen processes reads Redis: commands sampled with ``MONITOR``, by process.

With several server processes only the one holding the live lease should read the event
streams (``XREAD``); the others renew nothing but their interest and try the lease. ``MONITOR``
names each command's client address; the client port is matched to the server process that
owns the socket (``/proc/net/tcp`` inodes against each process's open files).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from pathlib import Path

import redis as redis_py


def socket_inodes(pid: int) -> set[int]:
    """Inodes of ``pid``'s open sockets."""
    found: set[int] = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except OSError:
        return found
    for entry in entries:
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(int(target[8:-1]))
    return found


def local_ports_by_inode() -> dict[int, int]:
    """Socket inode → its local TCP port, for every IPv4 and IPv6 TCP socket."""
    ports: dict[int, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            port = int(fields[1].rsplit(":", 1)[1], 16)
            ports[int(fields[9])] = port
    return ports


def process_of_port(pids: list[int]) -> dict[int, int]:
    """Local TCP port → the one of ``pids`` that owns the socket."""
    by_inode = local_ports_by_inode()
    owner: dict[int, int] = {}
    for pid in pids:
        for inode in socket_inodes(pid):
            port = by_inode.get(inode)
            if port is not None:
                owner[port] = pid
    return owner


def commands_by_process(redis_url: str, pids: list[int], seconds: float) -> dict[int, Counter[str]]:
    """Each of ``pids``' Redis commands over ``seconds`` (``MONITOR``), by command name."""
    seen: dict[int, Counter[str]] = {pid: Counter() for pid in pids}
    ports: Counter[tuple[int, str]] = Counter()
    stop = time.monotonic() + seconds
    client = redis_py.Redis.from_url(redis_url, socket_timeout=1.0)

    def sample() -> None:
        with client.monitor() as monitor:  # type: ignore[no-untyped-call]
            while time.monotonic() < stop:
                try:
                    line = monitor.next_command()
                except redis_py.TimeoutError:
                    continue
                port = int(str(line.get("client_port") or 0) or 0)
                name = str(line.get("command", "")).split(" ", 1)[0].strip('"').upper()
                ports[port, name] += 1

    worker = threading.Thread(target=sample, daemon=True)
    worker.start()
    worker.join(seconds + 5)
    client.close()
    owner = process_of_port(pids)
    for (port, name), count in ports.items():
        pid = owner.get(port)
        if pid is not None:
            seen[pid][name] += count
    return seen


def lease_state(r: redis_py.Redis, lease_key: str) -> tuple[str, str]:
    """The lease's owner (``host:pid:token``) and its count of takes."""
    owner = r.get(lease_key)
    takes = r.get(f"{lease_key}:takes")
    return str(owner or ""), str(takes or "")
