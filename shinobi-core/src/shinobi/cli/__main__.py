"""``python -m shinobi.cli``: the same as the ``ninja`` console script."""

from shinobi.cli.main import main

main()
