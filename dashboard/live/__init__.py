"""The live websocket: ``consumers.py``, ``present.py`` (what a page that starts watching is sent
at once), ``channel_groups.py`` (the live reader's supervisor; follower → channel-layer groups),
``fanout.py``, ``render.py`` (messages rendered by the pages' partials), ``shared_reads.py``,
``socket_auth.py``, ``socket_language.py``, ``socket_limits.py``, ``ws_origin.py``,
``ws_ticket.py``."""
