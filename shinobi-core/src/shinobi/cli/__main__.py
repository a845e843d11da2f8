"""``python -m shinobi.cli``: the same as the ``ninja`` console script."""

from shinobi.cli.console import main

main()
