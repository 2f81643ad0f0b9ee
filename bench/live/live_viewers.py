"""Bullpen's websocket viewers: one socket each, watching the overview or a queue page, and what
they saw in a window (latency of every update, messages and bytes)."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

import orjson
from live_hist import Hist
from live_settings import N_QUEUES, QUEUE_PAGE, WS_PATH, now_ms
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed


@dataclass
class Recorder:
    """What the viewers saw during the current window."""

    active: bool = False
    hists: dict[str, Hist] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    status_down: int = 0
    closed: int = 0
    started_ms: float = 0.0
    # Worst queue-page latency (progress or rows) in each second of the window.
    worst_by_second: dict[int, float] = field(default_factory=dict)

    def start(self) -> None:
        self.hists = {
            k: Hist() for k in ("progress", "rows", "overview", "overview-sent", "queue-counts")
        }
        self.started_ms = now_ms()
        self.worst_by_second = {}
        self.errors = []
        self.status_down = 0
        self.closed = 0
        self.active = True


class Viewer:
    def __init__(self, idx: int, kind: str, rec: Recorder, track_completed: bool) -> None:
        self.idx = idx
        self.kind = kind  # "overview" | "queue"
        self.rec = rec
        self.ws: ClientConnection | None = None
        self.task: asyncio.Task[None] | None = None
        self.closing = False
        self.track_completed = track_completed
        self.reset()

    def reset(self) -> None:
        self.msgs = 0
        self.bytes = 0
        self.types: dict[str, int] = {}
        self.progress_updates = 0
        self.row_entries = 0
        self.completed_ids: set[str] = set()

    def watch_message(self) -> dict[str, Any]:
        if self.kind == "overview":
            # As the overview page says it: the rows it shows (every queue, at 100 a page)
            # and how many queues its list counts. A server that renders the overview's live
            # parts sends it those ("overview" messages), an older one every queue's counts.
            shown = [f"bench-{i:02d}" for i in range(N_QUEUES)]
            return {"watch": "overview", "shown": shown, "listed": N_QUEUES}
        return {"watch": "queue", "queue": QUEUE_PAGE}

    async def open(self, port: int, wait_s: float) -> None:
        self.ws = await connect(
            f"ws://127.0.0.1:{port}{WS_PATH}",
            origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
            proxy=None,
            open_timeout=wait_s,
            close_timeout=5,
            ping_interval=None,  # browsers send no pings; the client still answers the server's
            max_size=2**24,
        )
        first = orjson.loads(await asyncio.wait_for(self.ws.recv(decode=False), wait_s))
        if first.get("type") != "status":
            raise RuntimeError(f"first message was not a status: {first!r:.200}")
        await self.ws.send(orjson.dumps(self.watch_message()).decode())
        self.task = asyncio.create_task(self._read(), name=f"viewer-{self.idx}")

    async def _read(self) -> None:
        ws = self.ws
        assert ws is not None
        rec = self.rec
        try:
            while True:
                raw = await ws.recv(decode=False)
                t = now_ms()
                if not rec.active:
                    continue
                self.msgs += 1
                self.bytes += len(raw)
                frame = orjson.loads(raw)
                batch = frame.get("type") == "batch"
                for msg in frame["messages"] if batch else [frame]:
                    self._take(msg, t)
        except ConnectionClosed as exc:
            if not self.closing:
                rec.closed += 1
                rec.errors.append(f"viewer {self.idx} ({self.kind}) closed by the server: {exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a parse error must not end the run silently
            rec.errors.append(f"viewer {self.idx}: {type(exc).__name__}: {exc}")

    def _take(self, msg: dict[str, Any], t: float) -> None:
        rec = self.rec
        kind = str(msg.get("type"))
        self.types[kind] = self.types.get(kind, 0) + 1
        if kind == "progress" or kind == "rows":
            worst = 0.0
            if kind == "progress":
                hist = rec.hists["progress"]
                for u in msg.get("updates", ()):
                    worst = max(worst, t - u["at"])
                    hist.add(t - u["at"])
                    self.progress_updates += 1
            else:
                hist = rec.hists["rows"]
                for row in msg.get("rows", ()):
                    worst = max(worst, t - row["at"])
                    hist.add(t - row["at"])
                    self.row_entries += 1
                    if self.track_completed and row.get("state") == "completed":
                        self.completed_ids.add(str(row.get("id")))
                for row in msg.get("removed", ()):
                    worst = max(worst, t - row["at"])
                    hist.add(t - row["at"])
                    self.row_entries += 1
            sec = int((t - rec.started_ms) / 1000)
            if worst > rec.worst_by_second.get(sec, 0.0):
                rec.worst_by_second[sec] = worst
        elif kind == "counts" or kind == "overview":
            event_at = msg.get("eventAt") or 0
            if event_at > 0:
                key = "overview" if self.kind == "overview" else "queue-counts"
                rec.hists[key].add(t - event_at)
                if self.kind == "overview":
                    # From the server's send to receipt: the fan-out's and this client's share.
                    rec.hists["overview-sent"].add(t - msg["at"])
        elif kind == "status":
            if msg.get("redis") != "ok":
                rec.status_down += 1
        elif kind == "error":
            rec.errors.append(f"viewer {self.idx}: {msg!r:.200}")

    async def close(self) -> None:
        self.closing = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.ws.close(), 6)
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task


def open_wait(n: int) -> float:
    """Seconds ``n`` viewers may take to open: 500 took 38 s on a saturated 2-core machine."""
    return 30.0 + n / 10


def viewer_kinds(n: int, queue_share: float) -> list[str]:
    n_queue = 0 if queue_share <= 0 else max(1, round(n * queue_share))
    n_queue = min(n, n_queue)
    return ["queue" if i < n_queue else "overview" for i in range(n)]


async def open_viewers(
    ports: list[int],
    kinds: list[str],
    rec: Recorder,
    wait_s: float,
    *,
    first_idx: int = 0,
    parallel: int = 50,
) -> list[Viewer]:
    n = len(kinds)
    viewers = [
        Viewer(first_idx + i, kind, rec, track_completed=(first_idx + i == 0))
        for i, kind in enumerate(kinds)
    ]
    gate = asyncio.Semaphore(parallel)
    failures: list[str] = []

    async def one(v: Viewer) -> None:
        async with gate:
            try:
                # Several server processes: viewers spread over them in turn.
                await v.open(ports[v.idx % len(ports)], wait_s)
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")

    await asyncio.gather(*(one(v) for v in viewers))
    if failures:
        await close_viewers(viewers)
        raise SystemExit(f"{len(failures)} of {n} websockets failed to open; first: {failures[0]}")
    return viewers


async def close_viewers(viewers: list[Viewer]) -> None:
    gate = asyncio.Semaphore(100)

    async def one(v: Viewer) -> None:
        async with gate:
            await v.close()

    await asyncio.gather(*(one(v) for v in viewers))


@dataclass
class ViewerStats:
    """What one viewer counted in a window (as a child process reports it)."""

    kind: str
    msgs: int
    bytes: int
    types: dict[str, int]
    progress_updates: int
    row_entries: int
    track_completed: bool
    completed_ids: set[str]

    @classmethod
    def of(cls, v: Viewer) -> ViewerStats:
        return cls(
            v.kind,
            v.msgs,
            v.bytes,
            dict(v.types),
            v.progress_updates,
            v.row_entries,
            v.track_completed,
            set(v.completed_ids),
        )
