"""The warning of a ``SHINOBI_CONFIG`` that names no file, for every command that
loads the configuration.

Apart from ``ninja config`` (whose command group costs ``ninja run`` 1.5 ms to
import) so that a run pays only for this function.
"""

from __future__ import annotations

import click

__all__ = ["warn_if_named_file_missing"]


def warn_if_named_file_missing() -> None:
    """Warn, for a command that loaded the configuration, when ``SHINOBI_CONFIG``
    names no file: a run without the site's settings (its partition, its cache)
    went unremarked by all but ``config show``."""
    from shinobi.config import named_file_missing

    said = named_file_missing()
    if said is not None:
        click.echo(f"ninja: warning: {said}", err=True)
