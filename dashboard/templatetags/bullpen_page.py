"""Template helpers for every page's frame: connections, the websocket path, notices, sign-out,
the tabs, the icon and the Preferences dialog."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django import template
from django.urls import NoReverseMatch

from queues.reads.keys import STATES

if TYPE_CHECKING:
    from dashboard.pages.notices import Notice

register = template.Library()


@register.simple_tag
def bullpen_connections() -> str:
    """The Redis connections' names, space-separated, when there are several (live.js tells
    one that is down from the others); empty with one."""
    from queues.redis import connections

    return " ".join(connections.names()) if connections.several() else ""


@register.simple_tag(takes_context=True)
def bullpen_ws_path(context: template.Context) -> str:
    """Where the live websocket is routed (``WEBSOCKET_PATH``), with the page's ticket for a
    basic-auth reader (whose browser may not send the credentials with the handshake)."""
    from dashboard.live import ws_ticket
    from queues.config.settings import get_config

    path = str(get_config()["WEBSOCKET_PATH"])
    principal = getattr(context.get("request"), "bullpen_principal", None)
    ticket = ws_ticket.issue(principal) if principal is not None else ""
    return f"{path}?{urlencode({'ticket': ticket})}" if ticket else path


@register.simple_tag
def bullpen_ws_connect(path: str) -> str:
    """The live websocket's address for htmx's websocket extension (``ws-connect``): ``path``
    (``bullpen_ws_path``) naming the page's language, which the socket's updates are rendered
    in."""
    from django.utils.translation import get_language

    joiner = "&" if "?" in path else "?"
    return f"{path}{joiner}{urlencode({'lang': get_language() or ''})}"


@register.simple_tag(takes_context=True)
def bullpen_notices(context: template.Context) -> list[Notice]:
    """The confirmations waiting for this page (after an action), read once."""
    from dashboard.pages import notices

    request = context.get("request")
    return notices.pending(request) if request is not None else []


@register.simple_tag
def bullpen_sign_out() -> dict[str, str]:
    """How the Sign out control works: where a session user posts, and the name the basic
    credentials script sends."""
    from dashboard.auth.account_views import logout_url
    from dashboard.auth.basic_auth import SIGNED_OUT

    return {"logout_url": logout_url(), "basic_user": SIGNED_OUT}


@register.simple_tag
def bullpen_tab_states() -> list[str]:
    """The states a queue page has a tab for (a BullMQ 5 ``paused`` list shows only when full)."""
    return [state for state in STATES if state != "paused"]


@register.simple_tag
def favicon_href() -> str:
    """The icon inlined as a data URI: a browser asks for a linked icon only after the page's
    load, one request more before the page is quiet."""
    return _favicon_data_uri()


@functools.cache
def _favicon_data_uri() -> str:
    from django.contrib.staticfiles import finders

    found = finders.find("bullpen/favicon.svg")
    path = found[0] if isinstance(found, list) else found
    if not path:
        return ""  # the static file is missing: no icon rather than a broken page
    with open(path, encoding="utf-8") as icon:
        svg = " ".join(icon.read().split())
    return "data:image/svg+xml," + quote(svg, safe=":/=,.")


@register.simple_tag(takes_context=True)
def bullpen_prefs(context: template.Context) -> dict[str, Any]:
    """What the Preferences dialog shows and where its script keeps a change: the remembered
    values (checked by the server), the cookie's name and path, and the server's defaults."""
    from dashboard.forms import preferences

    request = context.get("request")
    try:
        path = preferences.cookie_path()
    except NoReverseMatch:
        path = "/"  # a page of a site that routes no overview: nothing there reads the cookie
    return {
        "values": preferences.remembered(request) if request is not None else {},
        "cookie": preferences.COOKIE,
        "path": path,
        "json_depth_default": preferences.DEFAULT_JSON_DEPTH,
    }
