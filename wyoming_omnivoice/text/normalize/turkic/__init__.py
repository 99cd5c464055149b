"""Turkic languages: Turkish (`suffixes`: case and possessive endings after a number,
read with the number word's own vowel harmony)."""
