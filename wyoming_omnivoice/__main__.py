"""``python -m wyoming_omnivoice``: run the Wyoming server (see ``server/cli.py``)."""

from __future__ import annotations

from wyoming_omnivoice.server.cli import run

if __name__ == "__main__":
    run()
