"""The colour pairs of theme.css stay readable in both schemes (WCAG AA: 4.5:1 for text, 3:1
for chart lines, focus rings and control borders), and the other style sheets take every colour
from those custom properties, so no colour escapes the dark scheme."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[3] / "static" / "bullpen"
TEXT = 4.5
NON_TEXT = 3.0

# (foreground, background, least contrast): what is drawn on what somewhere in the pages.
PAIRS = [
    ("fg", "bg", TEXT),
    ("fg", "card", TEXT),
    ("fg", "head", TEXT),
    ("fg", "foot", TEXT),
    ("muted", "bg", TEXT),
    ("muted", "card", TEXT),
    ("muted", "head", TEXT),
    ("accent", "bg", TEXT),
    ("accent", "card", TEXT),
    ("accent", "head", TEXT),
    ("bad", "bg", TEXT),
    ("bad", "card", TEXT),
    ("warn", "card", TEXT),
    ("warn", "warn-bg", TEXT),
    ("ok", "card", TEXT),
    ("ok", "ok-soft", TEXT),
    ("on-fill", "bad-fill", TEXT),
    ("on-fill", "ok-fill", TEXT),
    ("on-fill", "warn-fill", TEXT),
    ("on-fill", "paused-fill", TEXT),
    ("on-fill", "neutral-fill", TEXT),
    ("chip-fg", "chip-bg", TEXT),
    ("info-fg", "info-bg", TEXT),
    ("fg", "info-bg", TEXT),
    ("accent", "info-bg", TEXT),
    ("fg", "flash-bg", TEXT),
    ("accent", "flash-bg", TEXT),
    ("ctrl-fg", "ctrl-bg", TEXT),
    ("top-fg", "top-bg", TEXT),
    ("top-muted", "top-bg", TEXT),
    ("toast-error-fg", "top-bg", TEXT),
    ("code-fg", "code-bg", TEXT),
    ("j-key", "card", TEXT),
    ("j-str", "card", TEXT),
    ("j-num", "card", TEXT),
    ("j-lit", "card", TEXT),
    ("chart-done", "chart-bg", NON_TEXT),
    ("chart-failed", "chart-bg", NON_TEXT),
    ("chart-done", "card", NON_TEXT),
    ("chart-failed", "card", NON_TEXT),
    ("focus", "bg", NON_TEXT),
    ("focus", "card", NON_TEXT),
    ("top-focus", "top-bg", NON_TEXT),
    ("control-line", "card", NON_TEXT),
    ("control-line", "bg", NON_TEXT),
]

HEX = r"#[0-9a-fA-F]{6}"
TOKEN = re.compile(rf"--([a-z0-9-]+):\s*light-dark\(\s*({HEX})\s*,\s*({HEX})\s*\)\s*;")


def tokens() -> dict[str, tuple[str, str]]:
    """Every colour token of theme.css: name → (light, dark)."""
    css = (STATIC / "theme.css").read_text()
    return {name: (light, dark) for name, light, dark in TOKEN.findall(css)}


def luminance(colour: str) -> float:
    def channel(hex_pair: str) -> float:
        c = int(hex_pair, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(colour[i : i + 2]) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_contrast_formula_matches_known_ratios() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert contrast("#2457c5", "#2457c5") == pytest.approx(1.0)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize(("fg", "bg", "least"), PAIRS, ids=[f"{f}-on-{b}" for f, b, _ in PAIRS])
def test_colour_pair_is_readable(scheme: str, fg: str, bg: str, least: float) -> None:
    palette = tokens()
    assert fg in palette and bg in palette, f"theme.css lacks --{fg} or --{bg}"
    side = 0 if scheme == "light" else 1
    ratio = contrast(palette[fg][side], palette[bg][side])
    assert ratio >= least, f"--{fg} on --{bg} in {scheme}: {ratio:.2f}:1 < {least}:1"


def test_the_dark_scheme_is_dark_and_the_light_one_light() -> None:
    palette = tokens()
    for surface in ("bg", "card", "head"):
        light, dark = palette[surface]
        assert luminance(light) > 0.7 and luminance(dark) < 0.05, surface


@pytest.mark.parametrize("sheet", ["app.css"])
def test_other_sheets_take_every_colour_from_the_theme(sheet: str) -> None:
    css = re.sub(r"/\*.*?\*/", "", (STATIC / sheet).read_text(), flags=re.DOTALL)
    literals = re.findall(r"#[0-9a-fA-F]{3,8}\b|\brgba?\(|\bhsla?\(", css)
    assert literals == [], f"{sheet} has colours outside theme.css: {literals}"
    used = set(re.findall(r"var\(--([a-z0-9-]+)\)", css))
    defined = set(re.findall(r"--([a-z0-9-]+):", (STATIC / "theme.css").read_text()))
    assert used <= defined, f"{sheet} uses properties theme.css lacks: {used - defined}"
