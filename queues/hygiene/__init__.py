"""Queue hygiene: what a queue keeps in Redis and the BullMQ options that bound it."""
