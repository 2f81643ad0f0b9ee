"""The schedulers page and ``api/schedulers/``: every job scheduler of every queue the user may
view, overdue ones first."""
