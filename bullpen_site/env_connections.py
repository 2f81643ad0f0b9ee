"""The standalone site's Redis connections, read from environment text.

``REDIS_URLS="eu=redis://eu-redis:6379/0 us=rediss://us-redis:6380/0"`` names several (the
first is the default one); unset, ``REDIS_URL`` names the one. A pair that does not parse stops
the site at start with the variable's name; names and URLs are judged by the system checks.
"""

from __future__ import annotations

from bullpen_site.env_access import BadEnvironment


def connections(text: str) -> dict[str, dict[str, str]]:
    """``"eu=redis://a us=redis://b"`` → ``{"eu": {"URL": "redis://a"}, "us": {...}}``."""
    found: dict[str, dict[str, str]] = {}
    for item in text.split():
        name, sep, url = item.partition("=")
        if not (sep and name and url):
            raise BadEnvironment(f"REDIS_URLS: {item.split('@')[-1]!r} is not <name>=<url>")
        if name in found:
            raise BadEnvironment(f"REDIS_URLS: {name!r} is named twice")
        found[name] = {"URL": url}
    return found
