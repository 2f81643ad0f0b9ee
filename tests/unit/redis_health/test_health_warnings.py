"""Which of a Redis server's figures warn, and what each warning tells the reader to change."""

from __future__ import annotations

import pytest
from django.utils import translation

from dashboard.health.texts import warning_text
from queues.redis.health_warnings import (
    COMMANDS_REFUSED,
    EVICTION_POLICY,
    MEMORY_HIGH,
    PERSISTENCE_OFF,
    HealthWarning,
    eviction_warning,
    memory_warning,
    persistence_warning,
    refused_warning,
    warnings_of,
)

MB = 1024 * 1024


@pytest.mark.parametrize(
    ("policy", "warns"),
    [
        ("noeviction", False),
        (None, False),  # not read: nothing to say
        ("allkeys-lru", True),
        ("volatile-lru", True),  # BullMQ's locks and markers expire: they may be evicted
        ("allkeys-random", True),
    ],
)
def test_only_noeviction_keeps_bullmqs_keys(policy: str | None, warns: bool) -> None:
    found = eviction_warning(policy)
    assert (found is not None) is warns
    if found is not None:
        assert found == HealthWarning(EVICTION_POLICY, {"policy": policy})


@pytest.mark.parametrize(
    ("used", "limit", "percent"),
    [
        (81 * MB, 100 * MB, 81),
        (100 * MB, 100 * MB, 100),
        (80 * MB, 100 * MB, None),  # at 80 % exactly: not yet above
        (10 * MB, 100 * MB, None),
        (900 * MB, 0, None),  # 0 is no limit
        (None, 100 * MB, None),
        (90 * MB, None, None),
    ],
)
def test_memory_warns_above_eighty_percent_of_the_limit(
    used: int | None, limit: int | None, percent: int | None
) -> None:
    found = memory_warning(used, limit)
    assert (found.params["percent"] if found else None) == percent


@pytest.mark.parametrize(
    ("aof", "save", "replicas", "warns"),
    [
        (False, "", 1, True),
        (False, "  ", 2, True),
        (True, "", 1, False),
        (False, "3600 1 300 100", 1, False),
        (False, "", 0, False),  # no replica to copy an empty restart
        (None, "", 1, False),  # INFO refused: undecided
        (False, None, 1, False),  # CONFIG GET refused: undecided
    ],
)
def test_persistence_off_warns_only_on_a_server_with_replicas(
    aof: bool | None, save: str | None, replicas: int, warns: bool
) -> None:
    assert (persistence_warning(aof, save, replicas) is not None) is warns


def test_refused_commands_are_named() -> None:
    assert refused_warning([]) is None
    found = refused_warning(["INFO", "CONFIG GET"])
    assert found == HealthWarning(COMMANDS_REFUSED, {"commands": "INFO, CONFIG GET"})


def test_every_warning_at_once_in_order_of_gravity() -> None:
    found = warnings_of(
        policy="allkeys-lru",
        used=95 * MB,
        limit=100 * MB,
        aof_enabled=False,
        save="",
        replicas=1,
        refused=["CONFIG GET"],
    )
    assert [w.code for w in found] == [
        EVICTION_POLICY,
        MEMORY_HIGH,
        PERSISTENCE_OFF,
        COMMANDS_REFUSED,
    ]
    healthy = warnings_of(
        policy="noeviction",
        used=MB,
        limit=0,
        aof_enabled=True,
        save="",
        replicas=1,
        refused=[],
    )
    assert healthy == []


@pytest.mark.parametrize(
    ("warning", "english", "german", "french"),
    [
        (
            HealthWarning(EVICTION_POLICY, {"policy": "allkeys-lru"}),
            "Set maxmemory-policy to noeviction.",
            "maxmemory-policy auf noeviction",
            "maxmemory-policy à noeviction",
        ),
        (
            HealthWarning(MEMORY_HIGH, {"percent": 91}),
            "Memory is at 91% of maxmemory",
            "91",
            "91",
        ),
        (
            HealthWarning(PERSISTENCE_OFF, {"replicas": 1}),
            "Set appendonly yes",
            "appendonly yes",
            "appendonly yes",
        ),
        (
            HealthWarning(COMMANDS_REFUSED, {"commands": "INFO"}),
            "may not run INFO",
            "INFO",
            "INFO",
        ),
    ],
)
def test_each_warning_says_what_to_change_in_three_languages(
    warning: HealthWarning, english: str, german: str, french: str
) -> None:
    texts = {}
    for language in ("en", "de", "fr"):
        with translation.override(language):
            texts[language] = warning_text(warning)
    assert english in texts["en"]
    assert german in texts["de"] and texts["de"] != texts["en"]
    assert french in texts["fr"] and texts["fr"] != texts["en"]


def test_a_code_this_version_does_not_know_is_shown_as_is() -> None:
    assert warning_text(HealthWarning("future-code")) == "future-code"
