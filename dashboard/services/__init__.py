"""The web process's background services: ``lifecycle.py`` starts and stops them with the
server (the list of services, and how one is added), ``registry.py`` keeps what each event loop
runs."""
