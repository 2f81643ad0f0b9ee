"""The "Go to queue" box's matching: exact before prefix before substring, any case, display
names too, and which text names one queue."""

from __future__ import annotations

from dashboard.pages.switcher_matching import EXACT, PREFIX, SUBSTRING, Match, QueueIndex


def index(*names: str, display: dict[str, str] | None = None) -> QueueIndex:
    shown = display or {}
    return QueueIndex((name, name.rpartition(":")[2], shown.get(name, name)) for name in names)


def slugs(found: QueueIndex, text: str, limit: int = 20) -> list[str]:
    return [match.slug for match in found.best(text, limit)[0]]


def test_exact_then_prefix_then_substring_ignoring_case() -> None:
    found = index("mail-digest", "bulk-email", "Email", "email-retry", "mailer", "mail")
    # Within a rank, shorter names first.
    expected = ["mail", "mailer", "mail-digest", "Email", "bulk-email", "email-retry"]
    assert slugs(found, "MAIL") == expected
    ranks = {m.slug: m.rank for m in found.best("mail", 20)[0]}
    assert ranks == {
        "mail": EXACT,
        "mailer": PREFIX,
        "mail-digest": PREFIX,
        "Email": SUBSTRING,
        "bulk-email": SUBSTRING,
        "email-retry": SUBSTRING,
    }


def test_display_names_match_and_are_given() -> None:
    found = index("sms-outbound", "push", display={"sms-outbound": "Text messages"})
    [match] = found.best("text", 20)[0]
    assert (match.slug, match.display_name, match.rank) == ("sms-outbound", "Text messages", PREFIX)
    assert found.destination("text messages") == "sms-outbound"


def test_a_second_prefix_matches_by_its_bare_name_too() -> None:
    found = index("orders", "legacy:orders", "legacy:refunds")
    assert slugs(found, "orders") == ["orders", "legacy:orders"]
    assert slugs(found, "refu") == ["legacy:refunds"]
    assert found.destination("orders") == "orders"
    assert found.destination("legacy:orders") == "legacy:orders"
    assert found.destination("refunds") == "legacy:refunds"


def test_at_most_the_limit_best_first_and_the_total() -> None:
    found = index(*(f"tenant-{n:04d}" for n in range(5000)), "tenant")
    shown, total = found.best("tenant", 20)
    assert total == 5001
    assert [m.slug for m in shown] == ["tenant"] + [f"tenant-{n:04d}" for n in range(19)]
    assert found.best("0042", 20) == ([Match("tenant-0042", "tenant-0042", SUBSTRING)], 1)


def test_where_enter_goes() -> None:
    found = index("email", "email-digest", "Orders", "orders", "shipping")
    assert found.destination("email") == "email"  # exact, though "email-digest" matches too
    assert found.destination("  EMAIL ") == "email"  # the only exact match, any case
    assert found.destination("ship") == "shipping"  # the only match
    assert found.destination("Orders") == "Orders"  # the URL name as typed wins
    assert found.destination("ORDERS") is None  # two names differ only by case
    assert found.destination("mail") is None  # several match
    assert found.destination("nothing-like-it") is None
    assert found.destination("   ") is None


def test_text_never_matches_across_two_names_of_a_queue() -> None:
    found = index("alpha", display={"alpha": "beta"})
    assert found.best("alpha\nbeta", 20) == ([], 0)
    assert found.best("", 20) == ([], 0)


def test_prefixes_up_to_the_last_code_point() -> None:
    top = chr(0x10FFFF)
    found = index(f"a{top}", f"a{top}b", "b", f"{top}", f"{top}x")
    assert slugs(found, "a") == [f"a{top}", f"a{top}b"]
    assert slugs(found, f"a{top}") == [f"a{top}", f"a{top}b"]
    assert slugs(found, top) == [top, f"{top}x", f"a{top}", f"a{top}b"]
