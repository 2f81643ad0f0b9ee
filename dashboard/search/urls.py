"""Search: the results page, the search APIs, and acting on a search's matches."""

from __future__ import annotations

from django.urls import path

from dashboard.pages.converters import QUEUE
from dashboard.search import all_queues_api, match_actions, queue_api, results_page

urlpatterns = [
    path("search/", results_page.search_page, name="search"),
    path("api/search/", all_queues_api.search_all, name="api-search-all"),
    path(f"api/queues/{QUEUE}/search/", queue_api.search_api, name="api-search"),
    path(
        f"api/queues/{QUEUE}/search/<slug:action>/",
        match_actions.search_action,
        name="search-action",
    ),
]
