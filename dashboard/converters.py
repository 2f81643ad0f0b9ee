"""A URL segment for queue names and job ids, which may hold any character, ``/`` included.

``/`` and ``%`` are escaped once more inside the segment, so the name survives Django's
own percent-decoding of the path and no name can break a reverse() into a 500.
"""

from __future__ import annotations


class NameConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return value.replace("%2F", "/").replace("%2f", "/").replace("%25", "%")

    def to_url(self, value: str) -> str:
        return str(value).replace("%", "%25").replace("/", "%2F")
