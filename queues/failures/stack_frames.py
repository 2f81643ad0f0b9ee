"""The frame a failure is named after: the innermost application frame of a job's last attempt.

BullMQ keeps one stack trace per attempt, the newest last. Python puts a traceback's innermost
frame last, Node puts it first. The frames of the code that runs handlers (Bullpen's worker
runner, BullMQ itself in either language) and of libraries say where the error surfaced, not
which handler failed: a frame of the application is preferred, then any frame but the
runner's and BullMQ's, then any frame at all.

Long traces are read as pieces (lua/read_failures.lua): the text may start or end inside an
escape, which is read as well as it can be.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from queues.reads.jsontext import loads_shown

_JS_FRAME = re.compile(r"\n\s+at ([^\n]+)")
_PY_FRAME = re.compile(r'File "([^"\n]+)", line \d+, in ([^\n]+)')
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))|\\u?[0-9a-fA-F]{0,3}$')
_SEPARATOR = re.compile(r"[/\\]")
_Frame = TypeVar("_Frame")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

# Code that runs handlers: never what a failure is named after while another frame is seen.
_RUNNER = re.compile(
    r"[/\\]queues[/\\]runner[/\\]|[/\\]bullmq[/\\]|node_modules[/\\]bullmq[/\\]|^node:|^internal[/\\]"
)
# Libraries (Python's own, installed packages, Node's modules): the application's frames first.
_LIBRARY = re.compile(
    r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d[^/\\]*[/\\]|^<frozen |"
    r"node_modules[/\\]|^node:|^internal[/\\]|[/\\]Lib[/\\]",
)


def last_attempt(stacktrace_text: str | None) -> str:
    """The last attempt's text of a whole ``stacktrace`` field (a JSON array of strings)."""
    if not stacktrace_text:
        return ""
    try:
        decoded = loads_shown(stacktrace_text)
    except ValueError:  # cut, or not JSON: read the escaped text as it is
        return unescape(stacktrace_text)
    if isinstance(decoded, list):
        return str(decoded[-1]) if decoded else ""
    return str(decoded)


def unescape(piece: str) -> str:
    """JSON string text (without its quotes) read leniently: a piece may start or end inside
    an escape; a lone surrogate reads as U+FFFD."""

    def one(match: re.Match[str]) -> str:
        code, simple = match.group(1), match.group(2)
        if simple:
            return _SIMPLE[simple]
        if code is None:
            return ""  # an escape cut at the end of the piece
        char = chr(int(code, 16))
        return "\ufffd" if 0xD800 <= ord(char) <= 0xDFFF else char

    return _ESCAPE.sub(one, piece)


def innermost(pieces: Sequence[str]) -> tuple[str, bool]:
    """The frame named for the last attempt whose text is ``pieces`` (decoded, in order):
    ``(file.py in function, False)`` for Python, ``(the frame's text, True)`` for Node, and
    ``("", False)`` for text without frames."""
    python: list[tuple[str, str]] = []
    for piece in pieces:
        python.extend(_PY_FRAME.findall(piece))
    if python:
        # Innermost last: search from the end.
        path, function = _choose(python[::-1], lambda frame: frame[0])
        return f"{_SEPARATOR.split(path)[-1]} in {function.strip()}", False
    node: list[str] = []
    for piece in pieces:
        node.extend(_JS_FRAME.findall(piece))
    if node:
        return _choose(node, lambda line: _location(line.strip())).strip(), True
    return "", False


def _choose(frames: Sequence[_Frame], location: Callable[[_Frame], str]) -> _Frame:
    """The first frame (innermost first) of the application, else the first that is not the
    runner's or BullMQ's, else the first. Locations are worked out only as far as needed:
    the application's frame is most often the first."""
    seen: list[str] = []
    for frame in frames:
        seen.append(location(frame))
        if not _LIBRARY.search(seen[-1]) and not _RUNNER.search(seen[-1]):
            return frame
    for where, frame in zip(seen, frames, strict=True):
        if not _RUNNER.search(where):
            return frame
    return frames[0]


def _location(line: str) -> str:
    """A Node frame's file: ``name (file:line:col)`` or ``file:line:col``."""
    inside = line[line.rfind("(") + 1 : line.rfind(")")] if line.endswith(")") else line
    return inside.removeprefix("file://")
