"""Who sent which Redis command: ``MONITOR`` captured to a file, and each connection's name.

``INFO commandstats`` counts every client together; to split the commands of two tools
recording the same jobs on one Redis, ``redis-cli MONITOR`` writes every command with the
address of the connection that sent it, and ``CLIENT LIST`` (polled) says whose each address
is: every connection but Bullpen's is named (``CLIENT SETNAME``), so an unnamed one is
Bullpen's. A command a Lua script runs is printed as from ``lua`` right after the ``EVAL`` /
``EVALSHA`` that ran it (scripts run alone), so it is counted to that script's sender, as
``INFO commandstats`` counts it too.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LINE = re.compile(r'^(\d+\.\d+) \[\d+ ([^\]]+)\] "([^"]*)"(?: "([^"]*)")?')


@dataclass
class Tally:
    """Commands per party, by name, in one window: ``top`` those sent, ``lua`` those scripts
    ran for them."""

    top: Counter[tuple[str, str]] = field(default_factory=Counter)
    lua: Counter[tuple[str, str]] = field(default_factory=Counter)

    def total(self, party: str, *, lua: bool = True) -> int:
        sent = sum(n for (who, _), n in self.top.items() if who == party)
        ran = sum(n for (who, _), n in self.lua.items() if who == party) if lua else 0
        return sent + ran

    def by_command(self, party: str) -> Counter[str]:
        out: Counter[str] = Counter()
        for counter in (self.top, self.lua):
            for (who, command), n in counter.items():
                if who == party:
                    out[command] += n
        return out


class Monitor:
    def __init__(self, port: int, path: Path) -> None:
        self.path = path
        self._out = path.open("wb")
        self._proc = subprocess.Popen(
            ["redis-cli", "-p", str(port), "monitor"], stdout=self._out, stderr=subprocess.DEVNULL
        )
        # Address -> the latest name seen for it ("" while unnamed).
        self.names: dict[str, str] = {}

    def note_clients(self, client_list: list[dict[str, Any]]) -> None:
        for client in client_list:
            addr, name = str(client.get("addr", "")), str(client.get("name") or "")
            if name or addr not in self.names:
                self.names[addr] = name

    async def poll_clients(self, bench: Any, every_s: float = 0.5) -> None:
        """Note every connection's name until cancelled (a connection named just after it
        opens is seen named at a later poll, and that name wins)."""
        while True:
            self.note_clients(bench.client_list())
            await asyncio.sleep(every_s)

    def stop(self) -> None:
        self._proc.terminate()
        self._proc.wait()
        self._out.close()

    def tally(
        self, parties: dict[str, str], windows: dict[str, tuple[float, float]]
    ) -> dict[str, Tally]:
        return tally(self.path, parties, windows)


def tally(
    path: Path, parties: dict[str, str], windows: dict[str, tuple[float, float]]
) -> dict[str, Tally]:
    """Count the commands of a ``MONITOR`` capture per window (Redis's own clock, epoch
    seconds), per party: ``parties`` maps an address to its party (unknown addresses:
    ``other``). The ``load`` party's scripts' commands on BullMQ's metrics keys are counted
    apart, as ``load metrics``: what keeping BullMQ's native metrics costs the workers."""
    out = {window: Tally() for window in windows}
    sender = "other"
    with path.open("r", encoding="utf-8", errors="replace") as lines:
        for line in lines:
            found = LINE.match(line)
            if not found:
                continue
            at, addr, command, first = found.groups()
            command = command.upper()
            inner = addr == "lua"
            if not inner:
                sender = parties.get(addr, "other")
            party = sender
            if inner and sender == "load" and first and ":metrics:" in first:
                party = "load metrics"
            moment = float(at)
            for window, (start, end) in windows.items():
                if start <= moment < end:
                    counter = out[window].lua if inner else out[window].top
                    counter[(party, command)] += 1
    return out
