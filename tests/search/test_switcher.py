"""The header's "Go to queue" box: suggestions as one types (best first, display names too,
escaped, only for those who may read) and where its form leads; then in a real Chromium on the
standalone site with reads closed: typing on a job page, Enter, a hostile name, the keyboard,
a signed-out visitor, and a 390 px phone."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import AsyncClient, override_settings
from playwright.async_api import Page, Route, expect

from dashboard.pages.switcher import MAX_SUGGESTIONS
from tests.support.browser import chromium
from tests.support.browser_checks import RECORD_VIOLATIONS, SIGNED_IN
from tests.support.markup import attribute, element, elements, text
from tests.support.peer import Peer
from tests.support.servers.live_server import LiveServer, http_get, stop_bullpen
from tests.support.servers.redis_server import RedisServer
from tests.support.standalone import CREDENTIALS, start_standalone

# The suggestions read the saved searches too.
pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '"><img src=x onerror=alert(1)>'
OPERATOR = {"Authorization": "Basic " + base64.b64encode(b"operator:s3cret-pass").decode()}


def make_queues(redis_client: Any, *names: str) -> None:
    """Queues as discovery finds them: by their ``id`` key, which BullMQ's first add writes."""
    with redis_client.pipeline(transaction=False) as pipe:
        for name in names:
            pipe.set(f"bull:{name}:id", "1")
        pipe.execute()


async def suggested(client: AsyncClient, typed: str, **headers: str) -> list[tuple[str, str]]:
    """(link, text) of each suggestion for ``typed``, in order."""
    response = await client.get("/queues/go/suggestions/", {"q": typed}, headers=headers)
    assert response.status_code == 200
    html = response.content.decode()
    return [(str(attribute(a, "href")), text(a)) for a in elements(html, "a", data_slug=None)]


async def goes_to(client: AsyncClient, typed: str, **headers: str) -> str:
    response = await client.get("/queues/go/", {"q": typed}, headers=headers)
    assert response.status_code == 302
    return str(response["Location"])


async def test_suggestions_best_first_with_links_to_the_queues(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, "bulk-email", "mail-digest", "Email", "mailer", "mail", "orders")
    assert await suggested(client, "MAIL") == [
        ("/queues/q/mail/", "mail"),
        ("/queues/q/mailer/", "mailer"),
        ("/queues/q/mail-digest/", "mail-digest"),
        ("/queues/q/Email/", "Email"),
        ("/queues/q/bulk-email/", "bulk-email"),
    ]
    nothing = (await client.get("/queues/go/suggestions/", {"q": "zzz"})).content.decode()
    assert text(element(nothing, "p", class_="switcher-none")) == "No queue matches “zzz”."
    empty = await client.get("/queues/go/suggestions/", {"q": "  "})
    assert empty.status_code == 200 and empty.content.decode().strip() == ""


async def test_display_names_and_other_prefixes_match(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    make_queues(redis_client, "sms-outbound", "push")
    redis_client.set("legacy:refunds:id", "1")
    options = {"sms-outbound": {"display_name": "Text messages"}}
    config = {**bullpen_settings, "PREFIXES": ["bull", "legacy"], "QUEUE_OPTIONS": options}
    with override_settings(BULLPEN=config):
        html = (await client.get("/queues/go/suggestions/", {"q": "text"})).content.decode()
        [link] = elements(html, "a", data_slug=None)
        assert attribute(link, "href") == "/queues/q/sms-outbound/"
        assert text(link).startswith("Text messages")
        assert text(element(link, "span", class_="muted")) == "sms-outbound"
        # A queue under another prefix shows its bare name, then its URL name.
        html = (await client.get("/queues/go/suggestions/", {"q": "refu"})).content.decode()
        [link] = elements(html, "a", data_slug="legacy:refunds")
        assert attribute(link, "href") == "/queues/q/legacy:refunds/"
        assert text(element(link, "span", class_="muted")) == "legacy:refunds"
        assert await goes_to(client, "text messages") == "/queues/q/sms-outbound/"
        assert await goes_to(client, "refunds") == "/queues/q/legacy:refunds/"


async def test_at_most_twenty_of_thousands_and_a_link_to_the_rest(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, *(f"tenant-{n:04d}" for n in range(3000)))
    response = await client.get("/queues/go/suggestions/", {"q": "tenant-0"})
    html = response.content.decode()
    links = elements(html, "a", data_slug=None)
    assert len(links) == MAX_SUGGESTIONS
    assert [text(a) for a in links[:2]] == ["tenant-0000", "tenant-0001"]
    more = element(html, "a", class_="switcher-more")
    assert attribute(more, "href") == "/queues/?q=tenant-0"
    assert text(more) == f"{1000 - MAX_SUGGESTIONS} more on the overview"


async def test_enter_goes_to_the_one_queue_named_or_the_filtered_overview(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, "email", "email-digest", "shipping", "shop", "Orders", "orders")
    assert await goes_to(client, "email") == "/queues/q/email/"  # exact beats "email-digest"
    assert await goes_to(client, " EMAIL ") == "/queues/q/email/"
    assert await goes_to(client, "shipp") == "/queues/q/shipping/"  # the only match
    assert await goes_to(client, "Orders") == "/queues/q/Orders/"
    assert await goes_to(client, "sh") == "/queues/?q=sh"  # shop and shipping
    assert await goes_to(client, "ORDERS") == "/queues/?q=ORDERS"
    assert await goes_to(client, "a b&c=d") == "/queues/search/?q=a+b%26c%3Dd"  # names none
    assert await goes_to(client, "") == "/queues/"
    assert (await client.get("/queues/go/", {"q": "x" * 1025})).status_code == 400


async def test_a_job_id_opens_the_job_and_other_text_searches_every_queue(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, "email", "sms")
    redis_client.hset("bull:email:order-7", mapping={"name": "n", "data": "{}", "timestamp": "1"})
    assert await goes_to(client, "order-7") == "/queues/q/email/jobs/order-7/"
    redis_client.hset("bull:sms:order-7", mapping={"name": "n", "data": "{}", "timestamp": "1"})
    assert await goes_to(client, "order-7") == "/queues/find/?id=order-7"  # in two queues
    assert await goes_to(client, "nosuch") == "/queues/search/?q=nosuch"
    html = (await client.get("/queues/search/?q=nosuch")).content.decode()
    form = element(html, "form", data_testid="search-all")
    assert attribute(element(form, "input", id="search-all-q"), "value") == "nosuch"


async def test_a_queue_created_since_the_last_scan_is_reached_by_its_name(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    make_queues(redis_client, "email")
    with override_settings(BULLPEN={**bullpen_settings, "DISCOVERY_INTERVAL": 3600}):
        assert await suggested(client, "new") == []  # the list is now kept for an hour
        make_queues(redis_client, "brand-new")
        assert await suggested(client, "new") == []
        assert await goes_to(client, "brand-new") == "/queues/q/brand-new/"
        assert await goes_to(client, "brand-ne") == "/queues/search/?q=brand-ne"


async def test_hostile_names_are_escaped_and_reached(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, HOSTILE, "\u202eliame", "50%/off")
    html = (await client.get("/queues/go/suggestions/", {"q": "img"})).content.decode()
    assert "<img" not in html
    [link] = elements(html, "a", data_slug=HOSTILE)
    assert text(link) == HOSTILE
    page = await client.get(str(attribute(link, "href")))
    assert page.status_code == 200
    assert await goes_to(client, HOSTILE) == str(attribute(link, "href"))
    # A direction-changing character shows as its code, not as "email" read backwards.
    html = (await client.get("/queues/go/suggestions/", {"q": "liame"})).content.decode()
    [link] = elements(html, "a", data_slug="\u202eliame")
    assert text(element(link, "span", class_="ctrl")) == "\\u202E"
    [(href, shown)] = await suggested(client, "50%")
    assert shown == "50%/off"
    assert (await client.get(href)).status_code == 200


@pytest.mark.django_db(transaction=True)
async def test_the_box_is_on_every_page_that_may_be_read(
    client: AsyncClient, redis_client: Any
) -> None:
    make_queues(redis_client, "email")
    redis_client.hset("bull:email:7", mapping={"name": "n", "data": "{}", "timestamp": "1"})
    pages = [
        "/queues/",
        "/queues/q/email/",
        "/queues/q/email/jobs/7/",
        "/queues/find/?id=7",
        "/queues/audit/",
        "/queues/q/nosuch/",  # the unknown queue's page
        "/queues/no/such/page",
    ]
    for path in pages:
        response = await client.get(path, headers=OPERATOR, follow=True)
        html = response.content.decode()
        form = element(html, "form", data_testid="switcher")
        assert attribute(form, "action") == "/queues/go/", path
        label = element(form, "label", for_="switcher-q")
        assert text(label) == "Go to queue"
        assert attribute(element(form, "input", id="switcher-q"), "name") == "q"


@pytest.mark.django_db(transaction=True)
async def test_closed_reads_suggest_nothing_to_a_signed_out_visitor(
    client: AsyncClient, redis_client: Any, bullpen_settings: dict[str, Any]
) -> None:
    make_queues(redis_client, "payroll-secret")
    closed = {**bullpen_settings, "READ_ACCESS": "dashboard.access.staff_or_basic_reader"}
    with override_settings(BULLPEN=closed):
        for path in ("/queues/go/suggestions/", "/queues/go/"):
            response = await client.get(path, {"q": "payroll"})
            assert response.status_code == 302
            assert response["Location"].startswith("/accounts/login/?next=")
            assert "payroll-secret" not in response.content.decode()
        wrong = {"Authorization": "Basic " + base64.b64encode(b"operator:wrong").decode()}
        refused = await client.get("/queues/go/suggestions/", {"q": "payroll"}, headers=wrong)
        assert refused.status_code == 401
        assert "payroll-secret" not in refused.content.decode()
        assert not elements(refused.content.decode(), "form", data_testid="switcher")
        assert await suggested(client, "payroll", **OPERATOR) == [
            ("/queues/q/payroll-secret/", "payroll-secret")
        ]
        assert await goes_to(client, "payroll", **OPERATOR) == "/queues/q/payroll-secret/"


async def test_only_get(client: AsyncClient) -> None:
    for path in ("/queues/go/", "/queues/go/suggestions/"):
        response = await client.post(path, {"q": "x"}, headers=OPERATOR)
        assert response.status_code == 405


# ---- in a real Chromium ---------------------------------------------------------------------


@pytest.fixture
def closed_site(
    redis_server: RedisServer, tmp_path: Path, seeded: dict[str, Any]
) -> Iterator[LiveServer]:
    """The standalone site with credentials and reads closed, under its strict CSP, started
    once its queues are made: it lists queues as a deployment does (scanned at its start, then
    every 30 s), so a queue made just after its first scan would not be suggested for a while."""
    server = start_standalone(redis_server.url, tmp_path, **CREDENTIALS)
    yield server
    stop_bullpen(server)


@pytest.fixture
def seeded(peer: Peer) -> dict[str, Any]:
    """Queues ``shop`` (a job in every state), ``shop-children``, ``shop-paused``,
    ``shipping`` and one whose name is markup; the ids of ``shop``'s jobs by state."""
    ids: dict[str, Any] = peer("scenario", "--queue", "shop")["ids"]
    peer("add", "--queue", "shipping", "--name", "label", "--data", "{}")
    peer("add", "--queue", HOSTILE, "--name", "x", "--data", "{}")
    return ids


async def type_in_box(page: Page, typed: str) -> None:
    box = page.get_by_label("Go to queue")
    await box.fill("")
    await box.press_sequentially(typed, delay=30)


@pytest.mark.browser
async def test_typing_on_a_job_page_then_enter_in_chromium(
    seeded: dict[str, Any], closed_site: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids = seeded
    job_url = f"{closed_site.url}/queues/q/shop/jobs/{ids['failed'][0]}/"
    async with chromium(chromium_path) as browser:
        # Signed out: the box's routes answer with the sign-in challenge, never a queue name.
        for route in ("go/", "go/suggestions/"):
            status, body = await asyncio.to_thread(
                http_get, f"{closed_site.url}/queues/{route}?q=ship"
            )
            assert status == 401, route
            assert "shipping" not in body and 'class="switcher"' not in body, route

        context = await browser.new_context(
            viewport={"width": 1280, "height": 800}, http_credentials=SIGNED_IN
        )
        page = await context.new_page()
        await page.add_init_script(RECORD_VIOLATIONS)
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await page.goto(job_url)
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        await page.evaluate("window.bullpenNoReload = true")

        # Part of a name: the suggestion shows; Enter goes to the queue.
        await type_in_box(page, "SHIP")
        matches = page.get_by_test_id("switcher-matches")
        await expect(matches.locator("a")).to_have_text(["shipping"])
        await page.get_by_label("Go to queue").press("Enter")
        await expect(page.locator("h1")).to_contain_text("shipping")
        assert page.url == f"{closed_site.url}/queues/q/shipping/"
        assert await page.evaluate("window.bullpenNoReload === true")  # no full reload

        # Ambiguous: the overview, filtered by what was typed.
        await type_in_box(page, "sh")
        await expect(matches.locator("a")).to_have_count(4)
        await expect(matches.locator("a").first).to_have_text("shop")
        await page.get_by_label("Go to queue").press("Enter")
        await expect(page).to_have_url(f"{closed_site.url}/queues/?q=sh")

        # No queue by that name: the jobs of every queue are searched for it.
        await type_in_box(page, "nosuch")
        await expect(matches.locator(".switcher-none")).to_have_text("No queue matches “nosuch”.")
        # What Enter does then is said, not only in the box's hidden hint.
        await expect(matches.get_by_test_id("switcher-enter")).to_have_text(
            "Enter opens the job of that id, or else searches the jobs of every queue for “nosuch”."
        )
        await page.get_by_label("Go to queue").press("Enter")
        await expect(page).to_have_url(f"{closed_site.url}/queues/search/?q=nosuch")
        await expect(page.get_by_test_id("search-none")).to_be_visible()

        # A hostile name is text; the keyboard reaches its suggestion, and keeps it when the
        # suggestions for the whole text arrive after the arrow key went into those for part
        # of it (held here until then; a loaded machine did the same).
        full_text = asyncio.Event()

        async def hold_the_full_text(route: Route) -> None:
            if "q=onerror" in route.request.url:
                await full_text.wait()
            await route.continue_()

        await page.route("**/go/suggestions/**", hold_the_full_text)
        await type_in_box(page, "onerr")
        hostile = matches.locator("a")
        await expect(hostile).to_have_text([HOSTILE])
        async with page.expect_request(lambda request: "q=onerror" in request.url):
            await page.get_by_label("Go to queue").press_sequentially("or", delay=30)
        await page.get_by_label("Go to queue").press("ArrowDown")
        await expect(hostile).to_be_focused()
        await hostile.evaluate("link => { link.dataset.before = 'yes'; }")
        full_text.set()
        await expect(matches.locator("a[data-before]")).to_have_count(0)
        await expect(hostile).to_have_text([HOSTILE])
        await expect(hostile).to_be_focused()
        await page.unroute("**/go/suggestions/**", hold_the_full_text)
        await page.keyboard.press("ArrowUp")
        await expect(page.get_by_label("Go to queue")).to_be_focused()
        await page.keyboard.press("ArrowDown")
        await page.keyboard.press("Enter")
        await expect(page.locator("h1")).to_contain_text(HOSTILE)
        await expect(page.locator(".switcher-matches a")).to_have_count(0)

        # Escape closes the suggestions.
        await type_in_box(page, "shop")
        await expect(matches.locator("a")).to_have_count(3)
        await page.keyboard.press("Escape")
        await expect(matches.locator("a")).to_have_count(0)

        assert dialogs == [] and errors == []
        assert await page.evaluate("window.__violations") == []
        await browser.close()


@pytest.mark.browser
async def test_the_box_on_a_phone(
    seeded: dict[str, Any], closed_site: LiveServer, chromium_path: str, tmp_path: Path
) -> None:
    ids = seeded
    async with chromium(chromium_path) as browser:
        context = await browser.new_context(
            viewport={"width": 390, "height": 844},
            is_mobile=True,
            has_touch=True,
            http_credentials=SIGNED_IN,
        )
        page = await context.new_page()
        await page.goto(f"{closed_site.url}/queues/q/shop/jobs/{ids['failed'][0]}/")
        await expect(page.locator('[data-testid="job-state"]')).to_have_text("failed")
        box = page.get_by_label("Go to queue")
        await box.tap()
        await box.press_sequentially("s", delay=30)
        links = page.get_by_test_id("switcher-matches").locator("a")
        # shop, shipping, shop-paused, shop-children and the markup one (its "src")
        await expect(links).to_have_count(5)
        fits = await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert fits, "the page scrolls sideways"
        sizes = [await box.bounding_box()] + [
            await link.bounding_box() for link in await links.all()
        ]
        for size in sizes:
            assert size is not None and size["height"] >= 44 and size["x"] >= 0
            assert size["x"] + size["width"] <= 390
        await links.filter(has_text="shipping").tap()
        await expect(page.locator("h1")).to_contain_text("shipping")
        await browser.close()
