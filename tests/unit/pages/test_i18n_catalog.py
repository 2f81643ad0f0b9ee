"""Every word a person reads is marked for translation, and the German and French catalogs
translate every marked message.

Templates are read with Django's own template lexer: text outside ``{% translate %}`` and
``{% blocktranslate %}`` that a person sees (text between tags, and the attributes browsers show
or read aloud) must not hold words. Messages are found as ``makemessages`` finds them: Django's
``templatize`` for templates, then a Python message extractor (Babel's) for its output and for
the app's Python modules.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.extract import extract_python
from babel.messages.pofile import read_po
from django.template.base import Lexer, TokenType
from django.utils.translation.template import templatize

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE_DIRS = (ROOT / "templates" / "bullpen", ROOT / "dashboard" / "templates")
LOCALE_DIR = ROOT / "dashboard" / "locale"
LANGUAGES = ("de", "fr")
# System checks speak to the developer setting the site up: English, as Django's own.
PYTHON_NOT_TRANSLATED = {"checks.py"}

# Attributes a browser shows or reads aloud (the phone layout shows data-label beside a
# cell); a button's value is its label.
VISIBLE_ATTRIBUTES = {"title", "aria-label", "placeholder", "alt", "label", "data-label"}
# Names that stay as they are in every language.
PROPER_NAMES = re.compile(r"\b(?:Bullpen|BullMQ|Redis|JSON|UTC|ms)\b")
# What stands for a template tag or variable in the text checked: not words.
TRANSLATED = "\x01"
FILLED_IN = "\x02"
KEYS_ONLY = {"kbd", "code", "script", "style", "pre"}
# Blocks a child template fills inside base.html's tags: attributes, not text.
ATTRIBUTE_BLOCKS = {"live", "main_attrs"}

KEYWORDS = {
    "gettext_noop": None,
    "gettext": None,
    "gettext_lazy": None,
    "_": None,
    "ngettext": None,
    "ngettext_lazy": None,
    "pgettext": None,
    "pgettext_lazy": None,
    "npgettext": None,
    "npgettext_lazy": None,
}

MessageKey = tuple[str | None, str]


def templates() -> list[Path]:
    return sorted(p for d in TEMPLATE_DIRS for p in d.rglob("*.html"))


def _without_markers(text: str) -> str:
    return PROPER_NAMES.sub("", text.replace(TRANSLATED, "").replace(FILLED_IN, ""))


def _has_words(text: str) -> bool:
    return re.search(r"[^\W\d_]{2,}", _without_markers(text)) is not None


def checked_text(source: str) -> str:
    """The template as a browser would get it, with every translated piece and every filled-in
    value replaced by a marker, and template logic left out."""
    parts: list[str] = []
    in_block = False
    in_comment = False
    in_attributes = False
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.COMMENT:
            continue
        if token.token_type == TokenType.BLOCK:
            words = token.contents.split()
            name = words[0] if words else ""
            if name == "comment":
                in_comment = True
            elif name == "endcomment":
                in_comment = False
            elif name == "block":
                in_attributes = words[1] in ATTRIBUTE_BLOCKS
            elif name == "endblock":
                in_attributes = False
            elif name in ("blocktranslate", "blocktrans"):
                in_block = True
                parts.append(TRANSLATED)
            elif name in ("endblocktranslate", "endblocktrans"):
                in_block = False
            elif name in ("translate", "trans") and " as " not in token.contents:
                parts.append(TRANSLATED)
            elif name in ("url", "firstof", "csrf_token", "widthratio") or "_" in name:
                parts.append(FILLED_IN)  # tags that output a value (a URL, a rendered part)
            continue
        if in_block or in_comment or in_attributes:
            continue
        if token.token_type == TokenType.VAR:
            parts.append(FILLED_IN)
            continue
        parts.append(token.contents)
    return "".join(parts)


def untranslated_in_variables(source: str) -> list[str]:
    """Words a variable falls back to (``|default:"none"``): they are shown, untranslated."""
    found = []
    for token in Lexer(source).tokenize():
        if token.token_type == TokenType.VAR:
            for literal in re.findall(r'default(?:_if_none)?:"([^"]*)"', token.contents):
                if _has_words(literal):
                    found.append(token.contents)
    return found


class VisibleText(HTMLParser):
    """Collects the text between tags and the visible attributes that still hold words."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.keys_only = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in KEYS_ONLY:
            self.keys_only += 1
        values = dict(attrs)
        for name, value in attrs:
            shown = name in VISIBLE_ATTRIBUTES or (
                name == "value"
                and tag in ("input", "button")
                and values.get("type") in ("submit", "button", "reset")
            )
            if shown and value and _has_words(value):
                self.found.append(f'<{tag} {name}="{_without_markers(value)}">')

    def handle_endtag(self, tag: str) -> None:
        if tag in KEYS_ONLY and self.keys_only:
            self.keys_only -= 1

    def handle_data(self, data: str) -> None:
        if not self.keys_only and _has_words(data):
            self.found.append(_without_markers(data).strip())


def unmarked_text(source: str) -> list[str]:
    parser = VisibleText()
    parser.feed(checked_text(source))
    parser.close()
    return parser.found + untranslated_in_variables(source)


@pytest.mark.unit
@pytest.mark.parametrize("path", templates(), ids=lambda p: p.name)
def test_template_text_is_marked_for_translation(path: Path) -> None:
    assert unmarked_text(path.read_text()) == [], f"{path.name}: text not marked for translation"


@pytest.mark.unit
def test_the_checker_finds_unmarked_text() -> None:
    """The checker itself: what it must catch, and what it must let through."""
    assert unmarked_text("<h1>Queues</h1>") == ["Queues"]
    assert unmarked_text('<button title="Pause it">{% translate "Pause" %}</button>') == [
        '<button title="Pause it">'
    ]
    assert unmarked_text('<input type="submit" value="Save">') == ['<input value="Save">']
    assert unmarked_text('{{ job.name|default:"(no name)" }}') == ['job.name|default:"(no name)"']
    assert unmarked_text("<p>{% blocktranslate %}{{ n }} jobs{% endblocktranslate %}</p>") == []
    assert unmarked_text('<a class="tab" href="?state=failed" data-state="x">{{ n }}</a>') == []
    assert unmarked_text("<kbd>g</kbd> · Bullpen · 3 ms · <code>name</code>") == []


def _template_messages(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(function, arguments) of each message in a template, as makemessages finds them."""
    code = templatize(path.read_text(), origin=str(path))
    # Only the calls matter: the template's indentation would confuse a Python tokenizer.
    code = "\n".join(line.lstrip() for line in code.splitlines())
    for _line, function, args, _comments in extract_python(
        io.BytesIO(code.encode()), KEYWORDS, [], {}
    ):
        yield function, args if isinstance(args, tuple) else (args,)


def _python_messages(path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    with path.open("rb") as source:
        for _line, function, args, _comments in extract_python(source, KEYWORDS, [], {}):
            yield function, args if isinstance(args, tuple) else (args,)


def _key(function: str, args: tuple[str, ...]) -> MessageKey:
    if function.startswith("np"):
        return args[0], f"{args[1]}\x00{args[2]}"
    if function.startswith("p"):
        return args[0], args[1]
    if function.startswith("n"):
        return None, f"{args[0]}\x00{args[1]}"
    return None, args[0]


def marked_messages() -> set[MessageKey]:
    found: set[MessageKey] = set()
    for path in templates():
        found |= {_key(f, a) for f, a in _template_messages(path)}
    for path in sorted((ROOT / "dashboard").rglob("*.py")):
        if path.name in PYTHON_NOT_TRANSLATED or "migrations" in path.parts:
            continue
        found |= {_key(f, a) for f, a in _python_messages(path)}
    # A call with a variable for its message (pgettext("time unit", unit)) names no message.
    return {key for key in found if key[1] is not None and "None" not in key[1].split("\x00")}


def catalog_entries(language: str) -> dict[MessageKey, list[str]]:
    """Each message of a catalog with its translations, fuzzy ones left out."""
    path = LOCALE_DIR / language / "LC_MESSAGES" / "django.po"
    with path.open("rb") as po:
        catalog = read_po(po, locale=language)
    entries: dict[MessageKey, list[str]] = {}
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        msgid = message.id if isinstance(message.id, str) else "\x00".join(message.id)
        strings = [message.string] if isinstance(message.string, str) else list(message.string)
        entries[(message.context, msgid)] = strings
    return entries


@pytest.mark.unit
def test_messages_are_found() -> None:
    messages = marked_messages()
    assert (None, "Skip to content") in messages
    assert ("job state", "failed") in messages
    assert (None, "%(n)s queue\x00%(n)s queues") in messages
    assert (None, "{n} {unit} ago") in messages  # from Python


@pytest.mark.unit
@pytest.mark.parametrize("language", LANGUAGES)
def test_catalog_translates_every_message(language: str) -> None:
    entries = catalog_entries(language)
    missing = sorted(
        (context or "", msgid.replace("\x00", " | "))
        for context, msgid in marked_messages()
        if not all(entries.get((context, msgid)) or [""])
    )
    assert missing == [], f"{language}: missing, empty or fuzzy translations"


@pytest.mark.unit
@pytest.mark.parametrize("language", LANGUAGES)
def test_translations_keep_their_placeholders(language: str) -> None:
    """A translation names the same ``%(name)s`` and ``{name}`` values as its message."""
    placeholder = re.compile(r"%\(\w+\)s|\{\w+\}")
    wrong = []
    for (_context, msgid), strings in catalog_entries(language).items():
        wanted = set(placeholder.findall(msgid))
        for string in strings:
            if string and set(placeholder.findall(string)) - wanted:
                wrong.append((msgid, string))
            # The plural's count may be left out of a form, never any other value.
            if string and wanted - set(placeholder.findall(string)) - {"%(n)s", "{n}"}:
                wrong.append((msgid, string))
    assert wrong == []


@pytest.mark.unit
@pytest.mark.parametrize("language", LANGUAGES)
def test_pages_get_the_catalogs_own_words(language: str) -> None:
    """Apps listed before Bullpen (the admin's "Empty", "Save") win a message both translate:
    every message of ours must come out as our catalog says, so a clash needs a context."""
    from django.utils import translation

    differ = []
    with translation.override(language):
        for (context, msgid), strings in catalog_entries(language).items():
            singular, _, plural = msgid.partition("\x00")
            if plural:
                got = (
                    translation.npgettext(context, singular, plural, 1)
                    if context
                    else translation.ngettext(singular, plural, 1)
                )
            else:
                got = (
                    translation.pgettext(context, msgid) if context else translation.gettext(msgid)
                )
            if got != strings[0]:
                differ.append((msgid, got, strings[0]))
    assert differ == []


@pytest.mark.unit
@pytest.mark.parametrize("language", LANGUAGES)
def test_translations_add_no_markup_characters(language: str) -> None:
    """Many messages land in attributes (title, hx-confirm): a translation may not bring a
    straight double quote or angle bracket its message does not have."""
    added = [
        (msgid, string)
        for (_context, msgid), strings in catalog_entries(language).items()
        for string in strings
        for char in '"<>'
        if string.count(char) > msgid.split("\x00")[0].count(char)
    ]
    assert added == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_message_is_in_a_catalog_twice(language: str) -> None:
    """gettext's own compiler refuses a catalog that defines a message twice (Babel, which
    builds ours, keeps the last): two engineers adding the same word must share one entry."""
    text = (LOCALE_DIR / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    seen: dict[tuple[str, str], int] = {}
    for entry in re.split(r"\n\s*\n", text):
        context = "".join(re.findall(r'^msgctxt "(.*)"$', entry, re.MULTILINE))
        ids = re.search(r'^msgid "(.*)"\n((?:".*"\n?)*)', entry, re.MULTILINE)
        if ids is None or entry.lstrip().startswith("#~"):
            continue
        key = (context, ids.group(1) + "".join(re.findall(r'^"(.*)"$', ids.group(2), re.MULTILINE)))
        seen[key] = seen.get(key, 0) + 1
    twice = [key for key, times in seen.items() if times > 1]
    assert len(seen) > 100 and not twice, twice
