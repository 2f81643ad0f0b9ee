"""Document analysis against a rate-limited upstream.

The upstream (an OCR or language-model service) accepts 5 requests a second per account, one
request per document: the queue's limiter keeps every worker process of the queue under that.
Busy answers (429) are retried with backoff; a document the upstream cannot read is not, it
goes to the dead-letter queue at once.

The client is pluggable (:func:`use_analyzer`); by default a deterministic simulation: the same
document always gives the same analysis, about one first attempt in seven is refused as busy.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

from bullmq import UnrecoverableError

from queues.runner import JobContext, Limiter, job_handler

UPSTREAM_LIMIT = Limiter(max=5, duration_ms=1000)


class UpstreamBusy(Exception):
    """The upstream answered 429 or 503: try again later."""


class UnreadableDocument(UnrecoverableError):  # type: ignore[misc]
    """The upstream cannot read this file: retrying will not help."""


class Analyzer(Protocol):
    async def analyze(self, document: str, pages: int, attempt: int) -> dict[str, Any]: ...


@dataclass
class SimulatedAnalyzer:
    seconds_per_page: float = 0.03
    busy_per_mille: int = 150  # first attempts refused as busy

    async def analyze(self, document: str, pages: int, attempt: int) -> dict[str, Any]:
        if document.endswith(".corrupt"):
            raise UnreadableDocument(f"{document}: not a PDF (no %PDF header)")
        if attempt == 1 and zlib.crc32(document.encode()) % 1000 < self.busy_per_mille:
            raise UpstreamBusy(f"upstream answered 429 Too Many Requests for {document}")
        await asyncio.sleep(self.seconds_per_page * pages)
        rng = random.Random(document)
        words = sum(rng.randint(80, 600) for _ in range(pages))
        return {
            "words": words,
            "language": rng.choice(["en", "fr", "de", "es"]),
            "entities": sorted(rng.sample(["ACME", "Paris", "2026", "invoice", "NDA"], 2)),
            "sentiment": round(rng.uniform(-1, 1), 2),
        }


_analyzer: Analyzer = SimulatedAnalyzer()


def use_analyzer(analyzer: Analyzer) -> None:
    """Plug in a real upstream client (e.g. from a site's ``AppConfig.ready``)."""
    global _analyzer
    _analyzer = analyzer


@job_handler("documents", concurrency=4, limiter=UPSTREAM_LIMIT)
async def analyze_document(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    if ctx.name == "summarize":
        return await summarize_bundle(payload, ctx)
    document = str(payload["document"])
    pages = max(1, int(payload.get("pages", 1)))
    pages_text = f"{pages} page" if pages == 1 else f"{pages} pages"
    await ctx.log(f"attempt {ctx.attempt}/{ctx.max_attempts}: sending {document} ({pages_text})")
    await ctx.progress({"percentage": 10, "stage": "uploaded"})
    analysis = await _analyzer.analyze(document, pages, ctx.attempt)
    await ctx.progress({"percentage": 90, "stage": "analysed"})
    await ctx.log(f"{analysis['words']} words, language {analysis['language']}")
    await ctx.progress({"percentage": 100, "stage": "done"})
    return {"document": document, "pages": pages, **analysis}


async def summarize_bundle(payload: dict[str, Any], ctx: JobContext) -> dict[str, Any]:
    """A bundle of documents (a flow): BullMQ runs this parent once every document of the
    bundle, its children, has been analysed; it sums up what they returned."""
    analyses = [a for a in (await ctx.job.getChildrenValues()).values() if isinstance(a, dict)]
    await ctx.log(f"summing up {len(analyses)} analysed documents of {payload.get('bundle')}")
    return {
        "bundle": payload.get("bundle"),
        "documents": sorted(str(a.get("document")) for a in analyses),
        "pages": sum(int(a.get("pages", 0)) for a in analyses),
        "words": sum(int(a.get("words", 0)) for a in analyses),
    }
