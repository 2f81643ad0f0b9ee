"""BullMQ 6's second store: queues kept in PostgreSQL by BullMQ's own schema.

Bullpen reads that schema with the SQL the Python ``bullmq`` package ships (its
``bullmq/postgres/commands``) and acts through the package's Postgres backend; it never runs
BullMQ's migrations. Bullpen's own state (live lease, alerts, bulk actions, history) stays on a
Redis connection when there is one; without one those are off, a store queue's pause reason
lives in the Django database and each server process reads the stores for its own pages.
"""
