"""A URL segment for queue names and job ids, which may hold any character, ``/`` included.

``/`` and ``%`` are escaped once more inside the segment, so the name survives Django's
own percent-decoding of the path and no name can break a reverse() into a 500. A name that is
all dots (``.``, ``..``) has its dots escaped too: browsers resolve such a path segment away
(``/q/../`` is ``/``), and the escaped form, percent-encoded again by reverse(), is one they
keep.

Importing this module registers them, under the names the route lists use.
"""

from __future__ import annotations

from django.urls import register_converter


class NameConverter:
    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return (
            value.replace("%2F", "/")
            .replace("%2f", "/")
            .replace("%2E", ".")
            .replace("%2e", ".")
            .replace("%25", "%")
        )

    def to_url(self, value: str) -> str:
        escaped = str(value).replace("%", "%25").replace("/", "%2F")
        return escaped.replace(".", "%2E") if escaped in (".", "..") else escaped


class ActionIdConverter:
    """A bulk action's id: a slug, then ``@`` and its connection when there are several."""

    regex = r"[-a-zA-Z0-9_]+(?:@[A-Za-z0-9][A-Za-z0-9_.-]{0,39})?"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(NameConverter, "bullpen_name")
register_converter(ActionIdConverter, "action_id")

# A URL's parts, as the route lists spell them.
QUEUE = "<bullpen_name:queue>"
JOB_ID = "<bullpen_name:job_id>"
SCHEDULER_ID = "<bullpen_name:scheduler_id>"
DEDUP_ID = "<bullpen_name:dedup_id>"
ACTION_ID = "<action_id:action_id>"
