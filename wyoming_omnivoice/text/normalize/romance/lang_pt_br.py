"""Brazilian Portuguese (``pt-BR``): the European table (`lang_pt`) with Brazil's number
words ("dezesseis", "dezenove"), spellings ("quilômetro"), money ("reais", "centavos") and
"primeiro de dezembro" for the first of a month."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from wyoming_omnivoice.text.normalize.romance import lang_pt as PT

RULES = replace(
    PT.RULES, code="pt_BR",
    units=PT.units("quilômetro"), currencies=PT.currencies("centavo"),
    ordinal_words=partial(PT.ordinal_words, lang="pt_BR"),
    time_words=partial(PT.time_words, lang="pt_BR"),
    date_words=partial(PT.date_words, lang="pt_BR", first="primeiro"),
)
