"""State changes, all through the bullmq package: its Queue and Job methods and its own Lua
scripts (never hand-written key edits), so that Node and Python workers stay correct.

``job_actions``: one job (retry, remove, promote, update data, duplicate, priority).
``reschedule``: a delayed job's new due time; ``children``: a parent's unprocessed children.
``queue_actions``: one queue or all (pause, resume, empty, obliterate, add a job, remove a
scheduler). ``scheduler_actions``: create or update a job scheduler, run one now.
``limits``: a queue's global concurrency and rate limit.
Retry-all, promote-all, clean and failure groups are bulk actions, run by the
bulk-action executor: queues/bulk/.
"""
