"""``python -m explorer`` behaves exactly like the ``ir-explorer`` console script."""

from explorer.cli import main

raise SystemExit(main(detach_writes=True))
