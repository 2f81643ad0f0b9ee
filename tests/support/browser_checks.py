"""Helpers that several test modules share.

Moved here from ``tests.browser.test_browser_a11y``, ``tests.auth.test_browser_security``.
"""

from __future__ import annotations

from typing import Any

from playwright.async_api import BrowserContext, Page

from tests.support.paths import ROOT
from tests.support.standalone import CREDENTIALS

AXE = ROOT / "tests" / "interop" / "node_modules" / "axe-core" / "axe.min.js"


# The dark scheme changes colours only (the markup and layout are the light one's): there, the
# rules about colour are the ones that can find something new. A phone changes the layout and
# keeps the light colours: there, every other rule. The light desktop gets every rule.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]


RULES: dict[str, dict[str, Any]] = {
    "light": {},
    "dark": {"runOnly": {"type": "rule", "values": COLOUR_RULES}},
    "phone": {"rules": {rule: {"enabled": False} for rule in COLOUR_RULES}},
}


# The serious and critical violations on the page, one line each with where they are.
AXE_RUN = """async options => {
  const result = await axe.run(document, { ...options, resultTypes: ["violations"] });
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => v.id + " (" + v.impact + "): " + v.help + " at "
      + v.nodes.slice(0, 4).map(n => n.target.join(" ") + " " + (n.failureSummary || "")
        .replace(/\\s+/g, " ")).join(" | "));
}"""


async def axe_on_every_page(context: BrowserContext) -> None:
    """axe-core in every page the context opens, for a test that checks many: sent to the
    browser once, not on every check (0.35 to 0.5 s each on a loaded machine, 0.05 to 0.15 s a
    page as an init script)."""
    await context.add_init_script(path=AXE)


async def axe_violations(page: Page, options: dict[str, Any]) -> list[str]:
    if not await page.evaluate("typeof axe === 'object'"):
        # A site with a strict CSP blocks an inline script: the contexts bypass it (bypass_csp).
        await page.add_script_tag(content=AXE.read_text())
    found: list[str] = await page.evaluate(AXE_RUN, options)
    return found


SIGNED_IN: Any = {
    "username": CREDENTIALS["DASHBOARD_USERNAME"],
    "password": CREDENTIALS["DASHBOARD_PASSWORD"],
}


# Every CSP violation a page reports, kept where the test can read it.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (event) {
  window.__violations.push(event.violatedDirective + " " + event.blockedURI);
});
"""


# The overview's "All queues" waiting total against its rows' own waiting counts summed (every
# row on the page): a page's two figures that must agree.
WAITING_SUMS = """() => {
  const n = el => Number((el && el.textContent || "").replace(/\\D/g, "") || 0);
  const rows = [...document.querySelectorAll('tr[data-queue] td[data-state="waiting"]')];
  return {
    total: n(document.querySelector('th[data-total="waiting"]')),
    rows: rows.reduce((sum, cell) => sum + n(cell), 0),
  };
}"""
