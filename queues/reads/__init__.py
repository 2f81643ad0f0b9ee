"""Reading queues and jobs: ``discovery.py``, ``counts.py`` (every state, one round trip),
``listing.py``, ``detail.py``, ``job_fields.py``, ``keys.py``, ``find.py``, ``flow.py``,
``schedulers.py``, ``workers.py``, ``dead_letters.py``, ``redaction.py``, ``jsontext.py``,
``scripts.py`` + ``lua/`` (read-only scripts)."""
