"""Job history: counts, wait and run times per queue and per job name, kept for 90 days."""
