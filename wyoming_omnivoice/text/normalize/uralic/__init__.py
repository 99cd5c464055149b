"""Uralic languages: Finnish, Hungarian."""
