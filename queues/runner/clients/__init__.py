"""The worker runner's Redis clients: ``redis_clients.py``, ``multiplex.py``,
``queue_handles.py``."""
