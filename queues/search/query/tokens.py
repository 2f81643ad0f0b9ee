"""The lexer: a query's text as tokens, each with the character it starts at.

Written by hand, one pass, no regular expression: the time it takes grows with the length of
the query and nothing else. A field term (``name:x``, ``data.user.id >= 5``) is one token, its
value included; a word with a colon that names no field (``http://x``, ``error:``) is text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from queues.search.query.errors import QuerySyntaxError

# Terms that look into a job's text fields (``:`` contains, ``=`` / ``!=`` equals).
TEXT_FIELDS = ("name", "reason", "id", "logs")
# Whole numbers of a job, compared.
NUMBER_FIELDS = ("attemptsMade", "priority", "progress")
# A job's times (ms since the epoch), compared with ``now-<N><unit>`` or an ISO date.
TIME_FIELDS = ("timestamp", "processedOn", "finishedOn")
# JSON values of a job, looked into along a dotted path.
PATH_ROOTS = ("data", "opts", "returnvalue")
OPERATORS = ("==", "!=", ">=", "<=", ":", "=", ">", "<")
KEYWORDS = ("AND", "OR", "NOT")
_STOP = frozenset(' \t\r\n\f\v()"')
_IDENT_EXTRA = frozenset("_-.$")


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "phrase", "field", "(", ")", "AND", "OR", "NOT", "end"
    at: int
    text: str = ""  # a word or phrase; a field's value (None: no value given)
    field: str = ""  # a field token's field as written ("name", "data.user.id")
    op: str = ""
    value: str | None = None
    value_at: int = 0
    quoted: bool = False  # a field's value was a phrase


def field_name(ident: str) -> str | None:
    """The field ``ident`` names, in its canonical spelling, or None (then it is text)."""
    lowered = ident.lower()
    if lowered in TEXT_FIELDS:
        return lowered
    for name in NUMBER_FIELDS + TIME_FIELDS:
        if lowered == name.lower():
            return name
    root, dot, path = ident.partition(".")
    if dot and root in PATH_ROOTS and path and "" not in path.split("."):
        return ident
    return None


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def phrase(self) -> str:
        """A quoted phrase from its opening quote; ``\\"`` and ``\\\\`` inside."""
        start = self.at
        self.at += 1
        parts: list[str] = []
        while self.at < len(self.text):
            char = self.text[self.at]
            if char == "\\" and self.at + 1 < len(self.text):
                parts.append(self.text[self.at + 1])
                self.at += 2
                continue
            if char == '"':
                self.at += 1
                return "".join(parts)
            parts.append(char)
            self.at += 1
        raise QuerySyntaxError(
            len(self.text), "a closing quote", f"the quote at {start + 1} is open"
        )

    def bare(self) -> str:
        start = self.at
        while self.at < len(self.text) and self.text[self.at] not in _STOP:
            self.at += 1
        return self.text[start : self.at]

    def ident(self) -> str:
        start = self.at
        while self.at < len(self.text) and (
            self.text[self.at].isalnum() or self.text[self.at] in _IDENT_EXTRA
        ):
            self.at += 1
        return self.text[start : self.at]

    def operator(self) -> str:
        for op in OPERATORS:
            if self.text.startswith(op, self.at):
                self.at += len(op)
                return op
        return ""


def tokens(text: str) -> Iterator[Token]:
    reader = _Reader(text)
    while True:
        reader.spaces()
        start = reader.at
        char = reader.peek()
        if not char:
            yield Token("end", start)
            return
        if char in "()":
            reader.at += 1
            yield Token(char, start)
        elif char == '"':
            yield Token("phrase", start, reader.phrase())
        else:
            field = _field(reader)
            if field is not None:
                yield field
                continue
            reader.at = start
            word = reader.bare()
            yield Token(word if word in KEYWORDS else "word", start, word)


def _field(reader: _Reader) -> Token | None:
    """A field term at the reader (then past it), or None."""
    start = reader.at
    name = field_name(reader.ident())
    if name is None:
        return None
    reader.spaces()
    op = reader.operator()
    if not op:
        return None
    reader.spaces()
    value_at = reader.at
    char = reader.peek()
    if char == '"':
        return Token(
            "field", start, field=name, op=op, value=reader.phrase(), value_at=value_at, quoted=True
        )
    value = reader.bare()
    return Token("field", start, field=name, op=op, value=value or None, value_at=value_at)
