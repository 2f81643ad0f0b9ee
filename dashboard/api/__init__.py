"""The JSON API: ``reads.py`` (GET routes), ``actions.py`` (every POST action),
``group_actions.py``, ``scheduler_actions.py``, ``worker_runner_views.py`` (what the worker
runner adds), ``serializers.py``, ``request_body.py``, ``fast_path.py`` (the GET routes without
Django's request cycle), ``metrics.py`` + ``metrics_collector.py`` (Prometheus).
``urls.py``: its routes (in ``dashboard/urls.py``'s table)."""
