"""Not implemented yet: this distribution registers no entry points."""

__all__: list[str] = []
