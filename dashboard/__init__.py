"""Bullpen's Django app: pages, JSON API, websockets and access control over ``queues``."""
