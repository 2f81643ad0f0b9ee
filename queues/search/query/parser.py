"""The parser: recursive descent over the lexer's tokens, with the usual precedence (NOT, then
AND, also implied by a space, then OR) and parentheses.

Bounded whatever it is given: the query's length (``MAX_LENGTH``), its nesting
(``MAX_DEPTH``: parentheses and NOTs, so the recursion stays far below Python's limit) and its
terms (``MAX_TERMS``: each is tried on every job read) are capped before a job is read.

One-clause queries keep the meaning they had before the language: bare words alone are one
phrase (``card declined``), and ``name:``, ``reason:``, ``id:`` or ``data.<path> =`` followed
by bare words take them all as the value (``name:send email``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from queues.errors import BadParameter
from queues.reads.jsontext import loads_shown
from queues.search.query.errors import QuerySyntaxError
from queues.search.query.terms import Term
from queues.search.query.tokens import NUMBER_FIELDS, TIME_FIELDS, Token, tokens
from queues.search.query.tree import AllOf, AnyOf, Node, Not, terms
from queues.search.query.values import number, time_ms

MAX_LENGTH = 2000  # characters
MAX_DEPTH = 32  # parentheses and NOTs inside one another
MAX_TERMS = 64
_LEGACY_FIELDS = ("name", "reason", "id")
_STARTS = ("word", "phrase", "field", "(", "NOT")


@dataclass(frozen=True)
class Query:
    """A parsed query. ``kind``, ``text``, ``path`` and ``value`` describe a one-term query
    (``kind`` is "expression" for any other)."""

    node: Node
    source: str

    @property
    def term(self) -> Term | None:
        return self.node if isinstance(self.node, Term) else None

    @property
    def kind(self) -> str:
        return self.term.kind if self.term else "expression"

    @property
    def path(self) -> tuple[str, ...]:
        return self.term.path if self.term else ()

    @property
    def value(self) -> Any:
        return self.term.value if self.term else None

    @property
    def text(self) -> str:
        """Text to show matches around: the first term's that looks for text."""
        return next((t.text for t in terms(self.node) if t.text and t.op == ":"), "")

    @cached_property
    def needs_logs(self) -> bool:
        return any(t.kind == "logs" for t in terms(self.node))

    @cached_property
    def json_roots(self) -> frozenset[str]:
        """The JSON fields (data, opts, returnvalue) a path term looks into."""
        return frozenset(t.root for t in terms(self.node) if t.kind == "field")

    def matched_in(self, job: dict[str, Any]) -> str | None:
        where = self.node.matched_in(job)
        return None if where is None else where or "name"

    def matches(self, job: dict[str, Any]) -> bool:
        return self.node.matched_in(job) is not None


def parse(raw: str, now_ms: int | None = None) -> Query:
    """``raw`` parsed; :class:`QuerySyntaxError` (a ``BadParameter``) says where it is wrong."""
    if len(raw) > MAX_LENGTH:
        raise QuerySyntaxError(MAX_LENGTH, f"at most {MAX_LENGTH:,} characters", "too long")
    if not raw.strip():
        raise BadParameter("Type something to search for")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    found = list(tokens(raw))
    legacy = _one_clause(raw, found)
    if legacy is not None:
        return Query(legacy, raw)
    return Query(_Parser(found, now).query(), raw)


def _one_clause(raw: str, found: list[Token]) -> Term | None:
    """The one-clause reading of a query of old, or None."""
    body = found[:-1]
    rest_plain = all(token.kind == "word" for token in body[1:])
    if not rest_plain:
        return None
    first = body[0]
    if first.kind == "word":
        return Term("text", text=raw.strip().lower()) if len(body) > 1 else None
    if first.kind != "field" or (len(body) == 1 and first.value is not None):
        return None
    value = raw[first.value_at :].strip()
    if first.field in _LEGACY_FIELDS and first.op == ":":
        return Term(first.field, text=value.lower())
    if first.field.startswith("data.") and first.op in ("=", "==") and value:
        return _data_equals(first.field, _literal(value))
    return None


def _literal(text: str) -> Any:
    try:
        # A value nested deeper than any shown one is compared as the text it is.
        return loads_shown(text)
    except ValueError:
        return text.strip("'\"")


def _data_equals(field: str, value: Any) -> Term:
    root, _, path = field.partition(".")
    return Term(
        "field",
        text=str(value).lower(),
        path=tuple(path.split(".")),
        value=value,
        op="=",
        root=root,
    )


class _Parser:
    def __init__(self, found: list[Token], now_ms: int) -> None:
        self.tokens = found
        self.index = 0
        self.depth = 0
        self.count = 0
        self.now_ms = now_ms

    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def query(self) -> Node:
        node = self.either()
        if self.token.kind != "end":
            expected = "AND, OR or the end of the query"
            if self.token.kind == ")":
                raise QuerySyntaxError(self.token.at, expected, "a ')' closes nothing")
            raise QuerySyntaxError(self.token.at, expected)
        return node

    def either(self) -> Node:
        parts = [self.both()]
        while self.token.kind == "OR":
            self.index += 1
            parts.append(self.both())
        return parts[0] if len(parts) == 1 else AnyOf(tuple(parts))

    def both(self) -> Node:
        parts = [self.unary()]
        while self.token.kind == "AND" or self.token.kind in _STARTS:
            if self.token.kind == "AND":
                self.index += 1
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else AllOf(tuple(parts))

    def unary(self) -> Node:
        token = self.token
        if token.kind == "NOT":
            self.enter(token)
            self.index += 1
            node: Node = Not(self.unary())
            self.depth -= 1
            return node
        if token.kind == "(":
            self.enter(token)
            self.index += 1
            inner = self.either()
            if self.token.kind != ")":
                raise QuerySyntaxError(self.token.at, "')'", f"the '(' at {token.at + 1} is open")
            self.index += 1
            self.depth -= 1
            return inner
        if token.kind in ("word", "phrase", "field"):
            self.count += 1
            if self.count > MAX_TERMS:
                raise QuerySyntaxError(token.at, f"at most {MAX_TERMS} terms", "too many terms")
            self.index += 1
            return self.term(token)
        raise QuerySyntaxError(token.at, "a term, NOT or '('")

    def enter(self, token: Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise QuerySyntaxError(token.at, f"at most {MAX_DEPTH} levels of nesting", "too deep")

    def term(self, token: Token) -> Term:
        if token.kind != "field":
            return Term("text", text=token.text.lower())
        if token.value is None:
            raise QuerySyntaxError(token.value_at, f"a value after {token.field}{token.op}")
        value, field, op = token.value, token.field, token.op
        if field in ("name", "reason", "id", "logs"):
            allowed = (":",) if field == "logs" else (":", "=", "!=")
            self._operator(token, allowed)
            return Term(field, text=value.lower(), op=op)
        if field in NUMBER_FIELDS or field in TIME_FIELDS:
            self._operator(token, ("=", "!=", ">", ">=", "<", "<=", ":"))
            op = "=" if op == ":" else op
            if field in TIME_FIELDS:
                moment = time_ms(value, self.now_ms)
                if moment is None:
                    raise QuerySyntaxError(token.value_at, "now, now-<N>s|m|h|d or an ISO date")
                return Term("time", value=float(moment), op=op, root=field)
            amount = number(value)
            if amount is None:
                raise QuerySyntaxError(token.value_at, "a number")
            return Term("number", value=amount, op=op, root=field)
        root, _, path = field.partition(".")
        parts = tuple(path.split("."))
        if op in (">", ">=", "<", "<="):
            amount = number(value)
            if amount is None:
                raise QuerySyntaxError(token.value_at, "a number")
            return Term("field", path=parts, value=amount, op=op, root=root)
        literal = value if token.quoted else _literal(value)
        return Term("field", text=value.lower(), path=parts, value=literal, op=op, root=root)

    def _operator(self, token: Token, allowed: tuple[str, ...]) -> None:
        if token.op not in allowed:
            raise QuerySyntaxError(
                token.at + len(token.field), f"one of {' '.join(allowed)} after {token.field}"
            )
