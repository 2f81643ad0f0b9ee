"""Search: ``queue_api.py`` (one queue, streamed), ``all_queues_api.py`` + ``results_page.py`` +
``render.py`` + ``scope.py`` + ``slots.py`` (every queue), ``match_actions.py`` +
``match_question.py`` (acting on matches)."""
