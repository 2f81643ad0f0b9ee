"""Cross-site request defence for actions.

Browsers attach cached basic credentials (and cookies) to a cross-site form POST, so
credentials alone prove nothing about intent. Every browser request carries ``Origin`` (and
``Sec-Fetch-Site``) on a POST: an action is refused unless they say the page that sent it is
this site's own. Clients that are not browsers (``curl -u``) send neither and are let through to
the credential check. Session users must also present Django's CSRF token.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.middleware.csrf import CsrfViewMiddleware


def _trusted_origins(request: HttpRequest) -> set[str]:
    own = f"{request.scheme}://{request.get_host()}"
    return {own, *getattr(settings, "CSRF_TRUSTED_ORIGINS", [])}


def cross_site_reason(request: HttpRequest) -> str | None:
    """Why the request looks cross-site, or None when it is not."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return f"cross-site request refused (Sec-Fetch-Site: {fetch_site})"
    origin = request.headers.get("Origin")
    if origin is not None and origin not in _trusted_origins(request):
        return "cross-site request refused (Origin does not match this site)"
    return None


def _never_called(request: HttpRequest) -> None:  # pragma: no cover - a stand-in view
    raise AssertionError


def csrf_token_problem(request: HttpRequest) -> str | None:
    """Django's own CSRF check (token and cookie), for requests authenticated by session."""
    refusal = CsrfViewMiddleware(_never_called).process_view(request, _never_called, (), {})  # type: ignore[arg-type]
    if refusal is None:
        return None
    return "CSRF token missing or incorrect"
