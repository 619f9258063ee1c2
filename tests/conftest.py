"""Shared pytest configuration: the slow marker is deselected by `make test` (-m "not slow")."""
