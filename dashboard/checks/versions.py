"""A system check that the installed bullmq, redis-py and Channels are the versions Bullpen's
fast paths were written against.

The worker runner's job completion mirrors bullmq 3.4.x's script arguments, its multiplexed
client takes over redis-py 8's connection and parser, and the live route search walks Channels
4's routers. Another major or minor version may change those internals without an error at
import time, and the failure would show up later as wrong counts or stuck jobs; this check
names the mismatch when the site starts instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from typing import Any

from django.core.checks import CheckMessage, Error, register

CHECK_ID = "bullpen.E020"


@dataclass(frozen=True)
class Supported:
    """``distribution`` at least ``lowest``, below ``below`` (release numbers as tuples)."""

    distribution: str
    lowest: tuple[int, ...]
    below: tuple[int, ...]
    what_mirrors_it: str

    @property
    def range_text(self) -> str:
        return f">={_dotted(self.lowest)},<{_dotted(self.below)}"


SUPPORTED = (
    Supported("bullmq", (3, 4, 4), (3, 5), "the worker runner's job completion"),
    Supported("redis", (8, 1), (9,), "the worker runner's multiplexed client"),
    Supported("channels", (4, 3), (5,), "the live websocket route search"),
)


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version string: "3.4.4" → (3, 4, 4), "8.1.0rc1" → (8, 1, 0)."""
    numbers: list[int] = []
    for part in version.split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        numbers.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(numbers)


def mismatches(installed: dict[str, str | None]) -> list[CheckMessage]:
    """One error per distribution whose ``installed`` version is outside what is supported
    (None: not installed)."""
    found: list[CheckMessage] = []
    for supported in SUPPORTED:
        version = installed.get(supported.distribution)
        if version is None:
            continue  # a missing package fails at import, with its own message
        if supported.lowest <= release(version) < supported.below:
            continue
        found.append(
            Error(
                f"{supported.distribution} {version} is installed; Bullpen supports "
                f"{supported.distribution}{supported.range_text}, whose internals "
                f"{supported.what_mirrors_it} mirrors.",
                hint=f"pip install '{supported.distribution}{supported.range_text}'",
                id=CHECK_ID,
            )
        )
    return found


def installed_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for supported in SUPPORTED:
        try:
            versions[supported.distribution] = metadata.version(supported.distribution)
        except metadata.PackageNotFoundError:
            versions[supported.distribution] = None
    return versions


@register("bullpen")
def check_dependency_versions(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    return mismatches(installed_versions())


def _dotted(numbers: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in numbers)
