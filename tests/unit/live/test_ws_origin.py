"""The live websocket's origin check on its own: scheme, host and port must be the site's, or a
trusted origin's."""

from __future__ import annotations

from typing import Any

from django.test import override_settings

from dashboard.live.ws_origin import origin_allowed, parse_origin


def scope(origin: str | None, host: str = "localhost:8000", **extra: Any) -> dict[str, Any]:
    headers = [(b"host", host.encode())]
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    return {"type": "websocket", "headers": headers, **extra}


def test_the_origin_must_match_scheme_host_and_port() -> None:
    assert origin_allowed(scope("http://localhost:8000"))
    assert not origin_allowed(scope("http://localhost:9999"))  # another service on the host
    assert not origin_allowed(scope("https://localhost:8000"))
    assert not origin_allowed(scope("http://evil.example:8000"))
    assert not origin_allowed(scope("null"))
    assert not origin_allowed(scope("http://localhost:8000/path"))
    assert origin_allowed(scope("http://127.0.0.1", host="127.0.0.1:80"))
    assert origin_allowed(scope("https://localhost", host="localhost", scheme="wss"))
    assert not origin_allowed(scope("http://localhost", host="localhost", scheme="wss"))
    # A Host the site does not serve is no origin of its own.
    assert not origin_allowed(scope("http://evil.example:8000", host="evil.example:8000"))
    assert origin_allowed(scope(None))  # not a browser: the credential check decides
    assert parse_origin("HTTP://[::1]:8000") == ("http", "::1", 8000)
    with override_settings(ALLOWED_HOSTS=["[::1]"]):
        assert origin_allowed(scope("http://[::1]:8000", host="[::1]:8000"))
        assert not origin_allowed(scope("http://[::1]:9999", host="[::1]:8000"))


def test_trusted_origins_and_a_tls_proxy_are_honoured() -> None:
    trusted = ["http://localhost:9999", "https://*.example.com"]
    with override_settings(CSRF_TRUSTED_ORIGINS=trusted):
        assert origin_allowed(scope("http://localhost:9999"))
        assert origin_allowed(scope("https://ops.example.com"))
        assert not origin_allowed(scope("http://ops.example.com"))
        assert not origin_allowed(scope("http://localhost:9998"))
    proxied = scope("https://localhost", host="localhost")
    assert not origin_allowed(proxied)
    proxied["headers"].append((b"x-forwarded-proto", b"https"))
    assert not origin_allowed(proxied)  # the header counts only where the site says so
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert origin_allowed(proxied)
