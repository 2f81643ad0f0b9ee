"""The preferences cookie: each remembered value passes the checks of the query-string parameter
it stands for or is ignored, and the query string wins over it, parameter by parameter."""

from __future__ import annotations

from urllib.parse import quote

from django.http import HttpRequest
from django.test import RequestFactory

from dashboard.forms import preferences


def request(query: str = "", cookie: str | None = None) -> HttpRequest:
    factory = RequestFactory()
    made = factory.get(f"/queues/?{query}" if query else "/queues/")
    if cookie is not None:
        made.COOKIES[preferences.COOKIE] = quote(cookie)
    return made


def test_the_overview_takes_the_remembered_order_groups_and_size() -> None:
    made = request(cookie="overview_sort=-failed&overview_group=head&overview_per_page=25")
    query = preferences.overview_query(made)
    assert dict(query.items()) == {"sort": "-failed", "group": "head", "per_page": "25"}


def test_the_query_string_wins_parameter_by_parameter() -> None:
    made = request("sort=name&q=mail", cookie="overview_sort=-failed&overview_group=tail")
    query = preferences.overview_query(made)
    assert dict(query.items()) == {"sort": "name", "group": "tail", "q": "mail"}


def test_an_explicitly_empty_parameter_wins_too() -> None:
    made = request("group=", cookie="overview_group=head")
    assert preferences.overview_query(made)["group"] == ""


def test_values_the_form_refuses_are_ignored_not_an_error() -> None:
    made = request(cookie="overview_sort=bogus&overview_group=head&overview_per_page=9999")
    query = preferences.overview_query(made)
    assert dict(query.items()) == {"group": "head"}


def test_a_queue_page_takes_the_remembered_tab_size_and_order() -> None:
    made = request(cookie="tab=failed&jobs_per_page=10&jobs_order=asc&overview_sort=-failed")
    query = preferences.queue_query(made)
    assert dict(query.items()) == {"state": "failed", "per_page": "10", "order": "asc"}


def test_a_queue_page_ignores_what_its_list_would_refuse() -> None:
    made = request(cookie="tab=nope&jobs_per_page=0&jobs_order=sideways")
    assert dict(preferences.queue_query(made).items()) == {}


def test_no_cookie_and_an_oversized_one_change_nothing() -> None:
    assert dict(preferences.overview_query(request("sort=-waiting")).items()) == {
        "sort": "-waiting"
    }
    huge = "overview_sort=-failed&" + "x=" + "y" * preferences.MAX_LENGTH
    assert dict(preferences.overview_query(request(cookie=huge)).items()) == {}


def test_the_dialog_shows_the_kept_values_and_the_default_depth() -> None:
    made = request(cookie="tab=failed&overview_group=head&json_depth=9&junk=1")
    assert preferences.remembered(made) == {
        "overview_group": "head",
        "tab": "failed",
        "json_depth": preferences.DEFAULT_JSON_DEPTH,
        "theme": "system",
    }
    made = request(cookie="json_depth=all")
    assert preferences.remembered(made)["json_depth"] == "all"


def test_the_colour_scheme_is_light_dark_or_the_systems() -> None:
    assert preferences.theme(request(cookie="theme=dark")) == "dark"
    assert preferences.theme(request(cookie="theme=light&tab=failed")) == "light"
    # Anything else (a hand-edited or hostile value) is the system's scheme.
    for kept in ("", "theme=", "theme=DARK", 'theme="><script>', "theme=system"):
        assert preferences.theme(request(cookie=kept)) == "system", kept
    assert preferences.remembered(request(cookie="theme=dark"))["theme"] == "dark"
