"""The worker runner on BullMQ's Postgres store: supervisor.py starts and stops, worker.py runs
jobs through the Python package's own Postgres worker, dead_letter.py and connection.py make
the final failure and its dead-letter copy one transaction."""
