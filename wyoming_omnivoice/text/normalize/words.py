"""Unit and currency names shared by the alphabetic languages (en, de, fr, es, it, nl).

Data only, keyed by the written symbol and then the language id; nouns are
``(singular, plural)`` pairs. Everything else a language needs is in its own
``<family>/lang_*.py`` table.
"""

from __future__ import annotations

# Units after a number. Keys are the written symbols; values map language -> (sing, plural).
UNITS: dict[str, dict[str, tuple[str, str]]] = {
    "°C": {
        "en": ("degree Celsius", "degrees Celsius"), "de": ("Grad Celsius", "Grad Celsius"),
        "fr": ("degré Celsius", "degrés Celsius"), "es": ("grado Celsius", "grados Celsius"),
        "it": ("grado Celsius", "gradi Celsius"), "nl": ("graad Celsius", "graden Celsius"),
    },
    "°F": {
        "en": ("degree Fahrenheit", "degrees Fahrenheit"),
        "de": ("Grad Fahrenheit", "Grad Fahrenheit"),
        "fr": ("degré Fahrenheit", "degrés Fahrenheit"),
        "es": ("grado Fahrenheit", "grados Fahrenheit"),
        "it": ("grado Fahrenheit", "gradi Fahrenheit"),
        "nl": ("graad Fahrenheit", "graden Fahrenheit"),
    },
    "°": {
        "en": ("degree", "degrees"), "de": ("Grad", "Grad"), "fr": ("degré", "degrés"),
        "es": ("grado", "grados"), "it": ("grado", "gradi"), "nl": ("graad", "graden"),
    },
    "%": {
        "en": ("percent", "percent"), "de": ("Prozent", "Prozent"),
        "fr": ("pour cent", "pour cent"), "es": ("por ciento", "por ciento"),
        "it": ("per cento", "per cento"), "nl": ("procent", "procent"),
    },
    "km/h": {
        "en": ("kilometer per hour", "kilometers per hour"),
        "de": ("Kilometer pro Stunde", "Kilometer pro Stunde"),
        "fr": ("kilomètre par heure", "kilomètres par heure"),
        "es": ("kilómetro por hora", "kilómetros por hora"),
        "it": ("chilometro orario", "chilometri orari"),
        "nl": ("kilometer per uur", "kilometer per uur"),
    },
    "mph": {
        "en": ("mile per hour", "miles per hour"),
        "de": ("Meile pro Stunde", "Meilen pro Stunde"),
        "fr": ("mile par heure", "miles par heure"),
        "es": ("milla por hora", "millas por hora"),
        "it": ("miglio orario", "miglia orarie"),
        "nl": ("mijl per uur", "mijl per uur"),
    },
    "m/s": {
        "en": ("meter per second", "meters per second"),
        "de": ("Meter pro Sekunde", "Meter pro Sekunde"),
        "fr": ("mètre par seconde", "mètres par seconde"),
        "es": ("metro por segundo", "metros por segundo"),
        "it": ("metro al secondo", "metri al secondo"),
        "nl": ("meter per seconde", "meter per seconde"),
    },
    "kWh": {
        "en": ("kilowatt hour", "kilowatt hours"),
        "de": ("Kilowattstunde", "Kilowattstunden"),
        "fr": ("kilowattheure", "kilowattheures"),
        "es": ("kilovatio hora", "kilovatios hora"),
        "it": ("chilowattora", "chilowattora"),
        "nl": ("kilowattuur", "kilowattuur"),
    },
    "kW": {
        "en": ("kilowatt", "kilowatts"), "de": ("Kilowatt", "Kilowatt"),
        "fr": ("kilowatt", "kilowatts"), "es": ("kilovatio", "kilovatios"),
        "it": ("chilowatt", "chilowatt"), "nl": ("kilowatt", "kilowatt"),
    },
    "W": {
        "en": ("watt", "watts"), "de": ("Watt", "Watt"), "fr": ("watt", "watts"),
        "es": ("vatio", "vatios"), "it": ("watt", "watt"), "nl": ("watt", "watt"),
    },
    "V": {
        "en": ("volt", "volts"), "de": ("Volt", "Volt"), "fr": ("volt", "volts"),
        "es": ("voltio", "voltios"), "it": ("volt", "volt"), "nl": ("volt", "volt"),
    },
    "hPa": {
        "en": ("hectopascal", "hectopascals"), "de": ("Hektopascal", "Hektopascal"),
        "fr": ("hectopascal", "hectopascals"), "es": ("hectopascal", "hectopascales"),
        "it": ("ettopascal", "ettopascal"), "nl": ("hectopascal", "hectopascal"),
    },
    "km": {
        "en": ("kilometer", "kilometers"), "de": ("Kilometer", "Kilometer"),
        "fr": ("kilomètre", "kilomètres"), "es": ("kilómetro", "kilómetros"),
        "it": ("chilometro", "chilometri"), "nl": ("kilometer", "kilometer"),
    },
    "cm": {
        "en": ("centimeter", "centimeters"), "de": ("Zentimeter", "Zentimeter"),
        "fr": ("centimètre", "centimètres"), "es": ("centímetro", "centímetros"),
        "it": ("centimetro", "centimetri"), "nl": ("centimeter", "centimeter"),
    },
    "mm": {
        "en": ("millimeter", "millimeters"), "de": ("Millimeter", "Millimeter"),
        "fr": ("millimètre", "millimètres"), "es": ("milímetro", "milímetros"),
        "it": ("millimetro", "millimetri"), "nl": ("millimeter", "millimeter"),
    },
    "m": {
        "en": ("meter", "meters"), "de": ("Meter", "Meter"), "fr": ("mètre", "mètres"),
        "es": ("metro", "metros"), "it": ("metro", "metri"), "nl": ("meter", "meter"),
    },
    "kg": {
        "en": ("kilogram", "kilograms"), "de": ("Kilogramm", "Kilogramm"),
        "fr": ("kilogramme", "kilogrammes"), "es": ("kilogramo", "kilogramos"),
        "it": ("chilogrammo", "chilogrammi"), "nl": ("kilogram", "kilogram"),
    },
    "g": {
        "en": ("gram", "grams"), "de": ("Gramm", "Gramm"), "fr": ("gramme", "grammes"),
        "es": ("gramo", "gramos"), "it": ("grammo", "grammi"), "nl": ("gram", "gram"),
    },
    "ml": {
        "en": ("milliliter", "milliliters"), "de": ("Milliliter", "Milliliter"),
        "fr": ("millilitre", "millilitres"), "es": ("mililitro", "mililitros"),
        "it": ("millilitro", "millilitri"), "nl": ("milliliter", "milliliter"),
    },
    "l": {
        "en": ("liter", "liters"), "de": ("Liter", "Liter"), "fr": ("litre", "litres"),
        "es": ("litro", "litros"), "it": ("litro", "litri"), "nl": ("liter", "liter"),
    },
    "lx": {
        "en": ("lux", "lux"), "de": ("Lux", "Lux"), "fr": ("lux", "lux"),
        "es": ("lux", "lux"), "it": ("lux", "lux"), "nl": ("lux", "lux"),
    },
    "ppm": {
        "en": ("part per million", "parts per million"),
        "de": ("ppm", "ppm"), "fr": ("ppm", "ppm"), "es": ("ppm", "ppm"),
        "it": ("ppm", "ppm"), "nl": ("ppm", "ppm"),
    },
    "µg/m³": {
        "en": ("microgram per cubic meter", "micrograms per cubic meter"),
        "de": ("Mikrogramm pro Kubikmeter", "Mikrogramm pro Kubikmeter"),
        "fr": ("microgramme par mètre cube", "microgrammes par mètre cube"),
        "es": ("microgramo por metro cúbico", "microgramos por metro cúbico"),
        "it": ("microgrammo per metro cubo", "microgrammi per metro cubo"),
        "nl": ("microgram per kubieke meter", "microgram per kubieke meter"),
    },
    "dB": {
        "en": ("decibel", "decibels"), "de": ("Dezibel", "Dezibel"),
        "fr": ("décibel", "décibels"), "es": ("decibelio", "decibelios"),
        "it": ("decibel", "decibel"), "nl": ("decibel", "decibel"),
    },
    "h": {
        "en": ("hour", "hours"), "de": ("Stunde", "Stunden"), "fr": ("heure", "heures"),
        "es": ("hora", "horas"), "it": ("ora", "ore"), "nl": ("uur", "uur"),
    },
    "min": {
        "en": ("minute", "minutes"), "de": ("Minute", "Minuten"), "fr": ("minute", "minutes"),
        "es": ("minuto", "minutos"), "it": ("minuto", "minuti"), "nl": ("minuut", "minuten"),
    },
    "s": {
        "en": ("second", "seconds"), "de": ("Sekunde", "Sekunden"),
        "fr": ("seconde", "secondes"), "es": ("segundo", "segundos"),
        "it": ("secondo", "secondi"), "nl": ("seconde", "seconden"),
    },
}
#: Aliases written for the same unit.
UNIT_ALIASES = {
    "℃": "°C", "℉": "°F", "° C": "°C", "° F": "°F", "kmh": "km/h", "km/u": "km/h",
    "ug/m³": "µg/m³", "μg/m³": "µg/m³", "µg/m3": "µg/m³", "ug/m3": "µg/m³", "μg/m3": "µg/m³",
    "L": "l", "mL": "ml", "KWh": "kWh", "kwh": "kWh", "Kw": "kW", "lux": "lx",
    "Std": "h", "Min": "min", "Sek": "s", "sec": "s", "hrs": "h", "hr": "h", "mins": "min",
}
#: Units that may be glued to the number ("5km") only when no letter follows; single
#: letters other than these need a space in front ("5 s", never "90s").
UNITS_NEED_SPACE = frozenset({"s", "h", "l", "g", "V", "W"})

# Currencies: symbol or ISO code -> language -> ((major sing, plural), (minor sing, plural)).
CURRENCIES: dict[str, dict[str, tuple[tuple[str, str], tuple[str, str]]]] = {
    "USD": {
        "en": (("dollar", "dollars"), ("cent", "cents")),
        "de": (("Dollar", "Dollar"), ("Cent", "Cent")),
        "fr": (("dollar", "dollars"), ("cent", "cents")),
        "es": (("dólar", "dólares"), ("centavo", "centavos")),
        "it": (("dollaro", "dollari"), ("centesimo", "centesimi")),
        "nl": (("dollar", "dollar"), ("cent", "cent")),
    },
    "EUR": {
        "en": (("euro", "euros"), ("cent", "cents")),
        "de": (("Euro", "Euro"), ("Cent", "Cent")),
        "fr": (("euro", "euros"), ("centime", "centimes")),
        "es": (("euro", "euros"), ("céntimo", "céntimos")),
        "it": (("euro", "euro"), ("centesimo", "centesimi")),
        "nl": (("euro", "euro"), ("cent", "cent")),
    },
    "GBP": {
        "en": (("pound", "pounds"), ("penny", "pence")),
        "de": (("Pfund", "Pfund"), ("Penny", "Pence")),
        "fr": (("livre", "livres"), ("penny", "pence")),
        "es": (("libra", "libras"), ("penique", "peniques")),
        "it": (("sterlina", "sterline"), ("penny", "penny")),
        "nl": (("pond", "pond"), ("penny", "pence")),
    },
    "CHF": {
        "en": (("Swiss franc", "Swiss francs"), ("centime", "centimes")),
        "de": (("Franken", "Franken"), ("Rappen", "Rappen")),
        "fr": (("franc", "francs"), ("centime", "centimes")),
        "es": (("franco", "francos"), ("céntimo", "céntimos")),
        "it": (("franco", "franchi"), ("centesimo", "centesimi")),
        "nl": (("frank", "frank"), ("rappen", "rappen")),
    },
    "JPY": {
        "en": (("yen", "yen"), ("sen", "sen")),
        "de": (("Yen", "Yen"), ("Sen", "Sen")),
        "fr": (("yen", "yens"), ("sen", "sen")),
        "es": (("yen", "yenes"), ("sen", "sen")),
        "it": (("yen", "yen"), ("sen", "sen")),
        "nl": (("yen", "yen"), ("sen", "sen")),
    },
    "CNY": {
        "en": (("yuan", "yuan"), ("fen", "fen")),
        "de": (("Yuan", "Yuan"), ("Fen", "Fen")),
        "fr": (("yuan", "yuans"), ("fen", "fens")),
        "es": (("yuan", "yuanes"), ("fen", "fen")),
        "it": (("yuan", "yuan"), ("fen", "fen")),
        "nl": (("yuan", "yuan"), ("fen", "fen")),
    },
}
CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "￥": "CNY"}
