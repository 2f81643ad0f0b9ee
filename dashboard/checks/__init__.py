"""System checks of what a mounting site forgot: ``mounting.py`` (the settings dict, installed
apps), ``websocket.py`` (the route, the channel layer), ``access_settings.py`` (who may read, act
and sign in), ``redis_reachable.py`` and ``postgres_store.py`` (``check --deploy``),
``throttle.py``, ``versions.py``."""
