"""The health of the Redis servers: ``views.py`` (``api/redis/`` and the overview's panel),
``texts.py`` (what each warning says)."""
