"""Slavic languages: Polish, Czech, Russian, Ukrainian (`shared`: the noun form each
numeral governs, noun tables, day ranges, the abbreviated year)."""
