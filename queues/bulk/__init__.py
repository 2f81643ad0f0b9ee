"""Bulk actions as durable work, run outside the HTTP request that asked for them.

``record``: what an action is (kind, queue, parameters, who, state, progress); ``store``: its
keys in Redis; ``submit``: recording a new one; ``kinds``: what each kind does, batch by batch
(``set_kinds``: retry-all, promote-all, clean; ``job_kinds``: a fixed list of jobs, e.g. a
failure group); ``counted``: batches whose count is written in the same transaction as the
change; ``executor``: the one runner per deployment (a lease) that executes and resumes them.
"""
