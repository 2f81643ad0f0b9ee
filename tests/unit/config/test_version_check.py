"""The start-up check that names a bullmq, redis-py or Channels version the fast paths were not
written against."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks

from dashboard.checks.versions import CHECK_ID, installed_versions, mismatches, release

TESTED = {"bullmq": "3.4.4", "redis": "8.1.0", "channels": "4.3.2"}


def test_the_versions_this_repository_pins_pass() -> None:
    assert mismatches(installed_versions()) == []
    assert CHECK_ID not in {message.id for message in run_checks(tags=["bullpen"])}


@pytest.mark.parametrize(
    ("distribution", "version"),
    [
        ("bullmq", "3.4.3"),
        ("bullmq", "3.5.0"),
        ("bullmq", "4.0.0"),
        ("redis", "8.0.2"),
        ("redis", "9.0.0b1"),
        ("channels", "5.0.0"),
        ("channels", "4.2.9"),
    ],
)
def test_a_version_outside_the_range_is_named(distribution: str, version: str) -> None:
    (message,) = mismatches({**TESTED, distribution: version})
    assert message.id == CHECK_ID and message.is_serious()
    assert message.msg.startswith(f"{distribution} {version} is installed")
    assert f"pip install '{distribution}>=" in str(message.hint)


@pytest.mark.parametrize(
    ("distribution", "version"),
    [("bullmq", "3.4.9"), ("redis", "8.9.1"), ("redis", "8.1.0.post1"), ("channels", "4.3")],
)
def test_versions_inside_the_range_pass(distribution: str, version: str) -> None:
    assert mismatches({**TESTED, distribution: version}) == []


def test_a_missing_package_is_left_to_its_import_error() -> None:
    assert mismatches({**TESTED, "channels": None}) == []


def test_release_numbers() -> None:
    assert release("3.4.4") == (3, 4, 4)
    assert release("9.0.0b1") == (9, 0, 0)
    assert release("8.1.0rc2") == (8, 1, 0)
    assert release("4.3") == (4, 3)
    assert release("dev") == ()
