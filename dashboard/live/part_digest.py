"""A live part of a page marked with a digest of what it shows.

The job page's parts are rendered by the page and again for every live message about the job
(the first right after its socket subscribes); the page swaps in only a part whose digest
differs from the one it shows, so an identical copy never replaces a button under a finger.
"""

from __future__ import annotations

import hashlib
import re

_OPENING = re.compile(r"\s*<[A-Za-z][\w-]*")
# "5 s ago" moves with the clock, not with the job (the page's script keeps it current).
_RELATIVE_TIME = re.compile(r'<span class="rel">[^<]*</span>')


def digested(html: str) -> str:
    """``html`` with ``data-digest`` on its first element (unchanged when it has none)."""
    opening = _OPENING.match(html)
    if opening is None:
        return html
    shown = _RELATIVE_TIME.sub("", html)
    digest = hashlib.blake2b(shown.encode(), digest_size=8).hexdigest()
    return f'{html[: opening.end()]} data-digest="{digest}"{html[opening.end() :]}'
