"""``settings.BULLPEN``: ``settings.py`` (merged over the documented defaults), ``problems.py``
(what is wrong with it; ``problem.py`` the type, ``redis_problems.py`` and ``alert_problems.py``
the Redis servers and the alert settings), ``queue_options.py``, ``redact_setting.py``."""
