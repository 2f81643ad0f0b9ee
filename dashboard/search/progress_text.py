"""What a running search says under its box, in the page's language: written by the server into
the stream's progress lines (``text``) for the pages, which show it as it comes. The plural
forms are the catalog's own (``ngettext``), as many as the language has."""

from __future__ import annotations

from django.utils.translation import gettext, ngettext


def _fill(text: str, **values: object) -> str:
    # Names in braces, as the catalogs write them; a translation's other braces stay as written.
    for name, value in values.items():
        text = text.replace("{" + name + "}", str(value))
    return text


def _ending(done: bool, full: bool, capped: bool, matched: int, capped_words: str) -> str:
    if not done:
        return "…"
    if full:
        return _fill(gettext(" (the first {n} shown: narrow the search for others)"), n=matched)
    return capped_words if capped else ""


def queue_search(
    scanned: int, total: int, matched: int, skipped: int, *, done: bool, full: bool
) -> str:
    """One queue's tab: how far the scan got, what it found and why it stopped early."""
    text = _fill(
        ngettext(
            "scanned {scanned} of {total}, {n} match",
            "scanned {scanned} of {total}, {n} matches",
            matched,
        ),
        scanned=scanned,
        total=total,
        n=matched,
    )
    if skipped:
        text += _fill(
            ngettext(
                ", {n} job skipped (data not readable as JSON)",
                ", {n} jobs skipped (data not readable as JSON)",
                skipped,
            ),
            n=skipped,
        )
    capped = gettext(" (the search stops at this many jobs)")
    return text + _ending(done, full, scanned < total, matched, capped)


def all_queues_search(
    queues: int,
    queues_total: int,
    scanned: int,
    matched: int,
    skipped: int,
    *,
    done: bool,
    full: bool,
    truncated: bool,
) -> str:
    """The search over every queue: queues done, jobs read, matches, and why it stopped early."""
    text = ", ".join(
        (
            _fill(gettext("queues {done} of {total}"), done=queues, total=queues_total),
            _fill(ngettext("{n} job read", "{n} jobs read", scanned), n=scanned),
            _fill(ngettext("{n} match", "{n} matches", matched), n=matched),
        )
    )
    if skipped:
        text += _fill(
            ngettext(
                ", {n} skipped (data not readable as JSON)",
                ", {n} skipped (data not readable as JSON)",
                skipped,
            ),
            n=skipped,
        )
    truncated_words = gettext(" (the search stops at this many jobs: narrow it to read the rest)")
    return text + _ending(done, full, truncated, matched, truncated_words)
