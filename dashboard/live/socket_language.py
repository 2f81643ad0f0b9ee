"""The language a live socket's updates are rendered in: the one its page was rendered in,
which the page names in the socket's address (``?lang=de``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from django.conf import settings
from django.utils.translation import get_supported_language_variant


def socket_language(scope: dict[str, Any]) -> str:
    """A language of the site's ``LANGUAGES``; the site's ``LANGUAGE_CODE`` for none or another."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    asked = (query.get("lang") or [""])[0][:20]
    try:
        return get_supported_language_variant(asked or settings.LANGUAGE_CODE)
    except LookupError:
        return str(settings.LANGUAGE_CODE)
