"""Errors that stop the start, shared by every part (the CLIs show them as one line)."""

from __future__ import annotations


def one_line(message: str) -> str:
    """A multi-line message as one log line (lines joined, indentation dropped)."""
    return " ".join(line.strip() for line in message.splitlines() if line.strip())


class StartupError(Exception):
    """A bad flag, file or model: the message is shown as is and the process exits 2."""
