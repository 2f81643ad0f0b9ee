"""State changes, all through the bullmq package's own Lua scripts (never hand-written key
edits), so that Node and Python workers stay correct.

``job_actions``: one job (retry, remove, promote, update data, duplicate, priority).
``queue_actions``: one queue or all (pause, resume, empty, obliterate, add a job, remove a
scheduler). Retry-all, promote-all, clean and failure groups are bulk actions that run in the
background: queues/background/.
"""
