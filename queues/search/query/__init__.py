"""The search's query language: ``tokens.py`` (the lexer), ``parser.py`` (recursive descent,
with the one-clause forms of old), ``terms.py`` (what one term matches), ``tree.py`` (AND, OR,
NOT), ``values.py`` (numbers and times), ``errors.py``."""

from __future__ import annotations

from queues.search.query.errors import QuerySyntaxError
from queues.search.query.parser import MAX_DEPTH, MAX_LENGTH, MAX_TERMS, parse
from queues.search.query.terms import Term
from queues.search.query.tree import Node

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "MAX_TERMS", "Node", "QuerySyntaxError", "Term", "parse"]
