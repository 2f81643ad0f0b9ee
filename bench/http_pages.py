"""The pages the HTTP benchmark measures: each dashboard's URL for them, a page's results per
server, and a check that an answer holds what was asked for."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from redis_commands import CmdResult
from wrk import WrkResult

BIG_QUEUE = "bench-00"
PER_PAGE = 50

# The exact requests each dashboard's UI makes (see bench/README.md).
BULLBOARD_URLS = {
    # What the Bull Board home page polls every few seconds.
    "overview": "/api/queues?page=1&jobsPerPage=10",
    # /queue/bench-00?status=failed&page=N with "jobs per page" set to 50.
    "failed": "/api/queues?activeQueue={queue}&status=failed&page={page}&jobsPerPage={per_page}",
}
BULLPEN_URLS = {
    "overview": "/queues/api/queues/",
    "failed": (
        "/queues/api/queues/{queue}/jobs/?state=failed&page={page}&per_page={per_page}&order=desc"
    ),
}
DEFAULT_BULLPEN_CMD = "./run serve"

TIMES = "\N{MULTIPLICATION SIGN}"
SERVER_TITLES = {"bullboard": "Bull Board", "bullpen": "Bullpen"}


@dataclass
class Cell:
    c1: WrkResult | None = None
    c10: WrkResult | None = None
    cmds: CmdResult | None = None
    note: str = ""


@dataclass
class Page:
    key: str
    title: str
    urls: dict[str, str]
    cells: dict[str, Cell] = field(default_factory=dict)


def check_response(server: str, page_key: str, body: bytes) -> str:
    """A short note if the answer does not look like what was asked for."""
    try:
        data = json.loads(body)
    except ValueError:
        return "answer is not JSON"
    if page_key == "overview":
        return ""
    if server == "bullboard":
        for q in data.get("queues", []):
            if q.get("name") == BIG_QUEUE:
                n = len(q.get("jobs", []))
                return "" if n == PER_PAGE else f"{n} jobs in the answer, not {PER_PAGE}"
        return f"{BIG_QUEUE} missing from the answer"
    # Bullpen: accept a top-level list or the first list found under a usual key.
    jobs = data if isinstance(data, list) else None
    if jobs is None and isinstance(data, dict):
        for key in ("jobs", "results", "items", "data"):
            if isinstance(data.get(key), list):
                jobs = data[key]
                break
    if jobs is None:
        return ""
    return "" if len(jobs) == PER_PAGE else f"{len(jobs)} jobs in the answer, not {PER_PAGE}"
