"""One page load in Chromium, seen through the DevTools protocol.

Each load gets a fresh browser context (empty cache, no cookies): the figures are those of a
first visit. Requests, bytes and timings come from the protocol's Network events, which see
every request of the page (also the many small ones the resource-timing buffer would drop);
first contentful paint comes from the page's own Paint Timing entry.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser, BrowserContext, CDPSession, Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

# The flags that work as root on these machines without network (see the testing notes), and
# every host name but the loopback's made unresolvable: a page's requests to the Internet
# (Bull Board's web font) fail at once instead of depending on the machine's DNS.
CHROMIUM_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
CHROMIUM_PATH = "/usr/bin/chromium"
VIEWPORT = {"width": 1300, "height": 900}

PAINT_AND_NAVIGATION_JS = """() => {
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    fcp: fcp ? fcp.startTime : null,
    domContentLoaded: nav ? nav.domContentLoadedEventEnd : null,
    load: nav ? nav.loadEventEnd : null,
    htmlBody: nav ? nav.decodedBodySize : null,
    status: nav && 'responseStatus' in nav ? nav.responseStatus : null,
  };
}"""


NEXT_FRAME_JS = "() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))"


@dataclass
class NetworkLog:
    """Requests of one page as the DevTools protocol reports them (times in seconds)."""

    started: dict[str, float] = field(default_factory=dict)
    urls: dict[str, str] = field(default_factory=dict)
    # Requests for a URL the page asked for before in this load (reported, still counted).
    repeats: set[str] = field(default_factory=set)
    ended: dict[str, float] = field(default_factory=dict)
    wire_bytes: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)
    websockets: int = 0
    document_id: str = ""
    document_start: float = 0.0

    def attach(self, cdp: CDPSession) -> None:
        cdp.on("Network.requestWillBeSent", self._on_request)
        cdp.on("Network.loadingFinished", self._on_finished)
        cdp.on("Network.loadingFailed", self._on_failed)
        cdp.on("Network.webSocketCreated", self._on_websocket)

    def _on_request(self, event: dict[str, Any]) -> None:
        request_id = str(event["requestId"])
        # A redirect reuses the request id: the first start counts.
        if request_id in self.started:
            return
        url = str(event.get("request", {}).get("url", ""))
        if url in self.urls.values():
            self.repeats.add(request_id)
        self.started[request_id] = float(event["timestamp"])
        self.urls[request_id] = url
        # A web worker's own script (Bull Board's syntax highlighter): its end is reported on
        # the worker's target, never on the page's, so it counts as ended when it starts (its
        # bytes are not counted).
        if event.get("type") == "Script" and event.get("documentURL") == url:
            self.ended[request_id] = float(event["timestamp"])
        if event.get("type") == "Document" and not self.document_id:
            self.document_id = request_id
            self.document_start = float(event["timestamp"])

    def load_requests(self) -> list[str]:
        """The ids of the load's requests."""
        return list(self.started)

    def _on_finished(self, event: dict[str, Any]) -> None:
        request_id = str(event["requestId"])
        self.ended[request_id] = float(event["timestamp"])
        self.wire_bytes[request_id] = int(event.get("encodedDataLength") or 0)

    def _on_failed(self, event: dict[str, Any]) -> None:
        request_id = str(event["requestId"])
        self.ended[request_id] = float(event["timestamp"])
        self.failed.append(self.urls.get(request_id, ""))

    def _on_websocket(self, _event: dict[str, Any]) -> None:
        self.websockets += 1


@dataclass
class PageLoad:
    """What one load of a page cost the browser (ms and bytes)."""

    fcp_ms: float | None
    network_idle_ms: float | None
    dom_content_loaded_ms: float | None
    load_ms: float | None
    requests: int
    repeated_requests: list[str]
    failed_requests: list[str]
    websockets: int
    html_body_bytes: int | None
    html_wire_bytes: int | None
    total_wire_bytes: int
    wall_s: float
    status: int | None
    last_request: str
    load_average: float
    note: str = ""


@dataclass
class OpenPage:
    context: BrowserContext
    page: Page
    network: NetworkLog
    wall_s: float
    timed_out: bool

    def close(self) -> None:
        self.context.close()


def open_page(
    browser: Browser, url: str, timeout_s: float, quiet_s: float, init_script: str = ""
) -> OpenPage:
    """Opens `url` in a fresh context and returns once no request has started for `quiet_s`.

    Playwright's "networkidle" waits for 500 ms without requests; a page may start many more
    after such a pause (rows or charts fetched later), so the wait goes on until a longer
    quiet spell in which every request has ended.
    """
    context = browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    network = NetworkLog()
    network.attach(cdp)
    cdp.send("Network.enable")
    t0 = time.monotonic()
    timed_out = False
    try:
        page.goto(url, wait_until="networkidle", timeout=timeout_s * 1000)
        while True:
            seen = len(network.load_requests())
            # Playwright's own wait keeps the page's network events coming; time.sleep would not.
            page.wait_for_timeout(quiet_s * 1000)
            # A page busy running scripts starts no request however long it is watched: wait
            # for a frame and a task, so the work it had queued has started its requests.
            page.evaluate(NEXT_FRAME_JS)
            own = network.load_requests()
            settled = len(own) == seen and set(own) <= set(network.ended)
            if settled:
                break
            if time.monotonic() - t0 > timeout_s:
                timed_out = True
                break
    except PlaywrightTimeout:
        timed_out = True
    return OpenPage(context, page, network, time.monotonic() - t0, timed_out)


def measure(opened: OpenPage) -> PageLoad:
    """The figures of a page opened by `open_page`."""
    net = opened.network
    timings: dict[str, Any] = opened.page.evaluate(PAINT_AND_NAVIGATION_JS)
    # Network idle: when the last request of the load ended (the quiet spell after it is not
    # counted); websockets are not requests and never end.
    idle_ms = None
    last = ""
    own = [request_id for request_id in net.load_requests() if request_id in net.ended]
    if own:
        last_id = max(own, key=lambda request_id: net.ended[request_id])
        last = net.urls.get(last_id, "")
        if not opened.timed_out:
            idle_ms = (net.ended[last_id] - net.document_start) * 1000
    html_wire = net.wire_bytes.get(net.document_id) if net.document_id else None
    html_body = timings.get("htmlBody")
    return PageLoad(
        fcp_ms=_float_or_none(timings.get("fcp")),
        network_idle_ms=idle_ms,
        dom_content_loaded_ms=_float_or_none(timings.get("domContentLoaded")),
        load_ms=_float_or_none(timings.get("load")),
        requests=len(net.load_requests()),
        repeated_requests=[net.urls[request_id] for request_id in net.repeats],
        failed_requests=list(net.failed),
        websockets=net.websockets,
        html_body_bytes=int(html_body) if html_body is not None else None,
        html_wire_bytes=html_wire,
        total_wire_bytes=sum(net.wire_bytes[i] for i in net.load_requests() if i in net.wire_bytes),
        wall_s=opened.wall_s,
        status=int(timings["status"]) if timings.get("status") is not None else None,
        last_request=last,
        load_average=os.getloadavg()[0],
        note=(
            "the network never went idle before the timeout"
            if opened.timed_out
            else "requests went on after the load seemed settled (figures are low)"
            if idle_ms is not None and idle_ms > opened.wall_s * 1000
            else ""
        ),
    )


def _float_or_none(value: Any) -> float | None:
    return float(value) if value is not None and value > 0 else None
