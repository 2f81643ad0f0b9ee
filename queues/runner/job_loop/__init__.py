"""The runner worker's job loop in parts, composed by ``queues/runner/worker.py`` (each part a
class the next one extends): ``fetch_next.py`` (fetching, the next job taken with a finish),
``job_end.py`` (recording a job's end, also while Redis is away), ``drain.py`` (stopping),
``cancels.py`` (cancelling a running job); and ``cancel_listener.py``, which hears the
dashboard's cancel requests for the whole runner."""
