"""A small cookie-keeping client that talks to the host's ASGI application, as a browser would
through daphne: every request goes through ``hostsite.asgi.application``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode

from channels.testing import HttpCommunicator, WebsocketCommunicator
from hostsite.asgi import application

HOST = "testserver"
ORIGIN = f"http://{HOST}"
PASSWORD = "correct horse battery staple"  # noqa: S105 - the test users'


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)

    def links(self) -> list[str]:
        """Every href and src of the page."""
        return re.findall(r'(?:href|src)="([^"]*)"', self.text)


@dataclass
class Browser:
    cookies: dict[str, str] = field(default_factory=dict)

    def _headers(self, extra: dict[str, str]) -> list[tuple[bytes, bytes]]:
        headers = {"host": HOST, **extra}
        if self.cookies:
            headers["cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Response:
        communicator = HttpCommunicator(
            application, method, path, body, self._headers(headers or {})
        )
        raw = await communicator.get_response(timeout=20)
        await communicator.wait(timeout=20)
        found: dict[str, str] = {}
        for name, value in raw["headers"]:
            key, text = name.decode().lower(), value.decode("latin-1")
            if key == "set-cookie":
                self._remember(text)
            found[key] = text
        return Response(raw["status"], found, raw["body"])

    def _remember(self, header: str) -> None:
        for name, morsel in SimpleCookie(header).items():
            if morsel["max-age"] == "0" or not morsel.value:
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = morsel.value

    async def get(self, path: str) -> Response:
        return await self.request("GET", path)

    async def post(
        self, path: str, data: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Response:
        return await self.request(
            "POST",
            path,
            urlencode(data or {}).encode(),
            {"content-type": "application/x-www-form-urlencoded", **(headers or {})},
        )

    async def log_in(self, username: str, password: str) -> None:
        """Through the host's own login form, as its users do."""
        form = await self.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert token, form.text[:500]
        done = await self.post(
            "/accounts/login/",
            {"username": username, "password": password, "csrfmiddlewaretoken": token[1]},
        )
        assert done.status == 302, done.text[:500]
        assert "sessionid" in self.cookies

    async def act(self, path: str) -> Response:
        """An action button: Bullpen's page supplies the CSRF token, the browser the Origin."""
        page = await self.get("/ops/queues/")
        token = re.search(r'"X-CSRFToken": "([^"]+)"', page.text)
        assert token, page.text[:500]
        return await self.post(path, headers={"x-csrftoken": token[1], "origin": ORIGIN})

    def websocket(self, path: str, origin: str = ORIGIN) -> WebsocketCommunicator:
        return WebsocketCommunicator(application, path, headers=self._headers({"origin": origin}))


async def signed_in(username: str) -> Browser:
    browser = Browser()
    await browser.log_in(username, PASSWORD)
    return browser
