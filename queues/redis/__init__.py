"""The Redis servers and clients: ``connections.py`` (the configured servers), ``urls.py`` (what
a URL names), ``clients.py`` (a client per loop and connection), ``pool_check.py``,
``cluster.py``, ``sentinel.py``, ``restricted.py``, ``reachability.py`` (servers found down),
``errors.py`` + ``unreachable.py``, ``write_once.py`` (writes sent at most once),
``per_connection.py``, ``fastpipe.py``."""
