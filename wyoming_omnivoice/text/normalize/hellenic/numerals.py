"""Greek number words: cardinals by gender and case ("ένας"/"έναν"/"μία"/"ένα",
"τρεις"/"τρία", "διακόσιοι"/"διακόσιες"/"διακόσια", "δύο χιλιάδες") and ordinals
("δεύτερος", "τρίτη", "εικοστό πρώτο"). num2words has no Greek.

Gender is "m", "f" or "n"; case is "nom", "acc" or "gen" (Home Assistant's timer replies
say "του χρονομέτρου 3 ωρών": "τριών ωρών"). Only 1, 3, 4, 13, 14, the hundreds from 200
and 1000 change.
"""

from __future__ import annotations

_UNITS = ("μηδέν", "ένα", "δύο", "τρία", "τέσσερα", "πέντε", "έξι", "επτά", "οκτώ", "εννέα",
          "δέκα", "έντεκα", "δώδεκα", "δεκατρία", "δεκατέσσερα", "δεκαπέντε", "δεκαέξι",
          "δεκαεπτά", "δεκαοκτώ", "δεκαεννέα")
_TENS = ("", "", "είκοσι", "τριάντα", "σαράντα", "πενήντα", "εξήντα", "εβδομήντα",
         "ογδόντα", "ενενήντα")
_HUNDREDS = ("", "εκατό", "διακόσι", "τριακόσι", "τετρακόσι", "πεντακόσι", "εξακόσι",
             "επτακόσι", "οκτακόσι", "εννιακόσι")
_MF = {"ένα": "", "τρία": "τρεις", "τέσσερα": "τέσσερις", "δεκατρία": "δεκατρείς",
       "δεκατέσσερα": "δεκατέσσερις"}
_GENITIVE = {"τρία": "τριών", "τέσσερα": "τεσσάρων", "δεκατρία": "δεκατριών",
             "δεκατέσσερα": "δεκατεσσάρων"}


def _ending(gender: str, case: str) -> str:
    """The ending of "διακόσι-" and "χίλι-"."""
    if case == "gen":
        return "ων"
    if gender == "m":
        return "ους" if case == "acc" else "οι"
    return "ες" if gender == "f" else "α"


def _below_100(value: int, gender: str, case: str) -> str:
    if value < 20:
        word = _UNITS[value]
    else:
        tens, unit = divmod(value, 10)
        return _TENS[tens] + (f" {_below_100(unit, gender, case)}" if unit else "")
    if case == "gen" and word in _GENITIVE:
        return _GENITIVE[word]
    if case == "gen" and word == "ένα":
        return "μίας" if gender == "f" else "ενός"
    if gender == "n" or word not in _MF:
        return word
    if word == "ένα":
        return "μία" if gender == "f" else ("έναν" if case == "acc" else "ένας")
    return _MF[word]


def _below_1000(value: int, gender: str, case: str) -> str:
    hundreds, rest = divmod(value, 100)
    words = []
    if hundreds == 1:
        words.append("εκατόν" if rest else "εκατό")
    elif hundreds:
        stem = _HUNDREDS[hundreds]
        if case == "gen":
            stem = stem.replace("όσι", "οσί")  # "διακοσίων"
        words.append(stem + _ending(gender, case))
    if rest or not hundreds:
        words.append(_below_100(rest, gender, case))
    return " ".join(words)


def cardinal(value: int, gender: str = "n", case: str = "nom") -> str:
    """"είκοσι ένα", "είκοσι μία", "τρεις", "διακόσιες", "δύο χιλιάδες τριακόσια"."""
    if value < 0:
        return "μείον " + cardinal(-value, gender, case)
    if value >= 10**12:
        return " ".join(_UNITS[int(d)] for d in str(value))
    words = []
    billions, value = divmod(value, 10**9)
    millions, value = divmod(value, 10**6)
    thousands, rest = divmod(value, 1000)
    for count, one, many in ((billions, "δισεκατομμύριο", "δισεκατομμύρια"),
                             (millions, "εκατομμύριο", "εκατομμύρια")):
        if count == 1:
            words.append(f"ένα {one}")
        elif count:
            words.append(f"{_below_1000(count, 'n', 'nom')} {many}")
    if thousands == 1:
        words.append(("χιλί" if case == "gen" else "χίλι") + _ending(gender, case))
    elif thousands:
        words.append(f"{_below_1000(thousands, 'f', case)} "
                     + ("χιλιάδων" if case == "gen" else "χιλιάδες"))
    if rest or not words:
        words.append(_below_1000(rest, gender, case))
    return " ".join(words)


_ORDINAL_UNITS = ("", "πρώτ", "δεύτερ", "τρίτ", "τέταρτ", "πέμπτ", "έκτ", "έβδομ", "όγδο",
                  "ένατ", "δέκατ", "ενδέκατ", "δωδέκατ")
_ORDINAL_TENS = ("", "δέκατ", "εικοστ", "τριακοστ", "τεσσαρακοστ", "πεντηκοστ", "εξηκοστ",
                 "εβδομηκοστ", "ογδοηκοστ", "ενενηκοστ")
_STRESS = str.maketrans("οηαεου", "όήάέόύ")


def _stressed(ending: str) -> str:
    """"ος" -> "ός", "ου" -> "ού", "η" -> "ή": the stress of "εικοστός" is on the ending."""
    return ending[:-1] + ending[-1].translate(_STRESS) if ending.endswith("ου") or \
        ending.endswith("οι") else ending[0].translate(_STRESS) + ending[1:]


def ordinal(value: int, ending: str = "ος") -> str:
    """The ordinal of 1-99 with the written ending ("ος", "ο", "η", "ου", ...): "2ος" ->
    "δεύτερος", "3η" -> "τρίτη", "21ο" -> "εικοστό πρώτο"; larger values: the cardinal."""
    if not 1 <= value <= 99:
        return cardinal(value)
    if value <= 12:
        return _ORDINAL_UNITS[value] + ending
    tens, unit = divmod(value, 10)
    head = _ORDINAL_TENS[tens]
    head += ending if tens == 1 else _stressed(ending)
    return head + (f" {_ORDINAL_UNITS[unit]}{ending}" if unit else "")
