"""The viewers of one window, in this process or spread over child processes
(live_viewer_child.py), started, stopped and closed together."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from typing import Any

from live_hist import hist_from_json
from live_settings import CHILD_REPLY_LIMIT, LIVE_DIR, N_QUEUES, NODE_DIR, QUEUE_PAGE, WS_PATH
from live_viewers import Recorder, Viewer, ViewerStats, close_viewers, open_viewers

# Run by path, so its own folder (bench/live/) is on its sys.path.
CHILD_SCRIPT = str(LIVE_DIR / "live_viewer_child.py")
# The same viewers in Node (its built-in WebSocket client), at a fraction of the CPU.
NODE_CHILD = ["node", "--experimental-websocket", str(NODE_DIR / "live_viewers.mjs")]
VIEWER_IMPLS = ("python", "node")


def child_command(impl: str) -> list[str]:
    """The command line of a viewer child of ``impl`` ("python" or "node"), before its spec."""
    return [sys.executable, CHILD_SCRIPT] if impl == "python" else list(NODE_CHILD)


class ViewerSet:
    """N websocket viewers of one window.

    Several hundred viewers are spread over child processes: one Python process cannot take
    500 sockets' messages as they arrive, and the time they wait in its event loop would be
    counted as Bullpen's latency (real viewers are separate browsers on separate machines).
    Node viewers (``impl`` "node") always run in child processes.
    """

    def __init__(self, n: int, kinds: list[str], procs: int, impl: str = "python") -> None:
        self.n = n
        self.kinds = kinds
        self.procs = procs
        self.impl = impl
        self.local: list[Viewer] = []
        self.children: list[asyncio.subprocess.Process] = []
        self.extensions = ""

    @property
    def viewers_queue(self) -> int:
        return sum(1 for k in self.kinds if k == "queue")

    async def open(self, ports: list[int], rec: Recorder, wait_s: float) -> None:
        """Open every viewer, spread over the server processes on ``ports`` in turn."""
        if self.procs <= 1 and self.impl == "python":
            self.local = await open_viewers(ports, self.kinds, rec, wait_s)
            ws = self.local[0].ws if self.local else None
            if ws is not None and ws.response is not None:
                self.extensions = ws.response.headers.get("Sec-WebSocket-Extensions") or "none"
            return
        # Each child gets an even share of both kinds, so no child carries all queue pages.
        shares: list[list[tuple[int, str]]] = [[] for _ in range(self.procs)]
        for i, kind in enumerate(self.kinds):
            shares[i % self.procs].append((i, kind))
        for share in shares:
            if not share:
                continue
            spec = {"ports": ports, "viewers": share, "wait_s": wait_s}
            spec.update(n_queues=N_QUEUES, queue_page=QUEUE_PAGE, ws_path=WS_PATH)
            child = await asyncio.create_subprocess_exec(
                *child_command(self.impl),
                json.dumps(spec),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                limit=CHILD_REPLY_LIMIT,
            )
            self.children.append(child)
        replies = await asyncio.gather(*(self._reply(c, wait_s + 30) for c in self.children))
        failed = [r["error"] for r in replies if "error" in r]
        if failed:
            await self.close()
            raise SystemExit(f"viewer processes failed to open their websockets: {failed[0]}")
        self.extensions = replies[0].get("extensions", "")

    @staticmethod
    async def _reply(child: asyncio.subprocess.Process, wait_s: float) -> dict[str, Any]:
        assert child.stdout is not None
        async with asyncio.timeout(wait_s):
            line = await child.stdout.readline()
        if not line:
            return {"error": f"viewer process {child.pid} exited ({await child.wait()})"}
        reply: dict[str, Any] = json.loads(line)
        return reply

    async def _ask(self, command: str) -> list[dict[str, Any]]:
        for child in self.children:
            assert child.stdin is not None
            child.stdin.write(command.encode() + b"\n")
            await child.stdin.drain()
        # A child behind on its sockets' messages answers after them: 1,000 viewers on a
        # saturated machine took over a minute.
        wait_s = max(60.0, self.n / 5)
        return list(await asyncio.gather(*(self._reply(c, wait_s) for c in self.children)))

    @property
    def pids(self) -> list[int]:
        return [c.pid for c in self.children]

    async def start(self, rec: Recorder) -> None:
        if self.children:
            await self._ask("start")
            return
        for v in self.local:
            v.reset()
        rec.start()

    async def stop(self, rec: Recorder) -> list[ViewerStats]:
        """End the window: ``rec`` gets every process's histograms; returns each viewer's."""
        rec.active = False
        if not self.children:
            return [ViewerStats.of(v) for v in self.local]
        rec.start()
        rec.active = False
        stats: list[ViewerStats] = []
        for reply in await self._ask("stop"):
            for name, d in reply["hists"].items():
                rec.hists[name].merge(hist_from_json(d))
            for sec, ms in reply["worst_by_second"].items():
                rec.worst_by_second[int(sec)] = max(rec.worst_by_second.get(int(sec), 0.0), ms)
            rec.errors.extend(reply["errors"])
            rec.status_down += reply["status_down"]
            rec.closed += reply["closed"]
            for v in reply["viewers"]:
                stats.append(ViewerStats(**{**v, "completed_ids": set(v["completed_ids"])}))
        return stats

    async def close(self) -> None:
        if not self.children:
            await close_viewers(self.local)
            return
        with contextlib.suppress(Exception):
            await self._ask("close")
        for child in self.children:
            try:
                await asyncio.wait_for(child.wait(), 15)
            except TimeoutError:
                child.kill()
                await child.wait()
        self.children = []
