"""Search: ``queue_api.py`` (one queue, streamed), ``all_queues_api.py`` + ``results_page.py`` +
``render.py`` + ``scope.py`` + ``slots.py`` (every queue), ``streams.py`` (the streamed answer
both share), ``match_actions.py`` + ``match_question.py`` (acting on matches). ``urls.py``: its
routes (in ``dashboard/urls.py``'s table)."""
