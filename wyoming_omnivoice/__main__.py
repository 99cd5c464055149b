"""``python -m wyoming_omnivoice``: run the Wyoming server (see ``app/cli.py``)."""

from __future__ import annotations

from wyoming_omnivoice.app.cli import run

if __name__ == "__main__":
    run()
