"""A viewer child process: ``python live_viewer_child.py SPEC`` opens the viewers SPEC (JSON)
names, then answers start/stop/close on stdin with one JSON line each on stdout."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from live_hist import hist_to_json
from live_viewers import Recorder, Viewer, ViewerStats, close_viewers, open_viewers


async def viewer_child(spec: dict[str, Any]) -> None:
    """A child process's viewers: open, then answer start/stop/close on stdin, JSON on stdout."""
    rec = Recorder()
    share = spec["viewers"]
    out = sys.stdout
    viewers: list[Viewer] = []
    try:
        for idx, kind in share:
            viewers.extend(
                await open_viewers(spec["ports"], [kind], rec, spec["wait_s"], first_idx=idx)
            )
    except BaseException as exc:  # SystemExit from open_viewers included
        out.write(json.dumps({"error": str(exc)}) + "\n")
        out.flush()
        await close_viewers(viewers)
        return
    ws = viewers[0].ws
    extensions = ""
    if ws is not None and ws.response is not None:
        extensions = ws.response.headers.get("Sec-WebSocket-Extensions") or "none"
    out.write(json.dumps({"opened": len(viewers), "extensions": extensions}) + "\n")
    out.flush()
    loop = asyncio.get_running_loop()
    while True:
        command = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
        if command == "start":
            for v in viewers:
                v.reset()
            rec.start()
            reply: dict[str, Any] = {"ok": True}
        elif command == "stop":
            rec.active = False
            reply = {
                "hists": {name: hist_to_json(h) for name, h in rec.hists.items()},
                "worst_by_second": rec.worst_by_second,
                "errors": rec.errors[:20],
                "status_down": rec.status_down,
                "closed": rec.closed,
                "viewers": [
                    {**ViewerStats.of(v).__dict__, "completed_ids": sorted(v.completed_ids)}
                    for v in viewers
                ],
            }
        else:  # "close", or the parent went away
            await close_viewers(viewers)
            out.write(json.dumps({"closed": True}) + "\n")
            out.flush()
            return
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    asyncio.run(viewer_child(json.loads(sys.argv[1])))
