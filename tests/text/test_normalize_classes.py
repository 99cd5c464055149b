"""Issue 15's error classes, one test per class per language.

Each case is a sentence a Home Assistant household would hear, and the words a native
speaker says for it, written by hand (never copied from the normaliser's output). Where a
class does not arise in a language, the comment in its table says so instead of a case.
Letter case is not changed: a sentence that starts with digits starts with a lower-case
word, which is spoken the same.
"""

from __future__ import annotations

import pytest

from wyoming_omnivoice.text.normalize import normalize_text

# 1. "min." at a sentence end is minutes (the unit rules run before the abbreviations),
#    and "1 h 30 min" is a duration, not a clock time.
MINUTES = [
    ("en", "Timer set for 5 min.", "Timer set for five minutes."),
    ("de", "Der Timer läuft noch 5 Min.", "Der Timer läuft noch fünf Minuten."),
    ("fr", "Minuteur réglé sur 5 min.", "Minuteur réglé sur cinq minutes."),
    ("es", "Temporizador de 1 h 30 min.", "Temporizador de una hora y treinta minutos."),
    ("it", "Timer impostato per 5 min.", "Timer impostato per cinque minuti."),
    ("nl", "Timer ingesteld op 5 min.", "Timer ingesteld op vijf minuten."),
    # zh: Chinese replies write 分钟; a Latin "min" after a number is the unit.
    ("zh", "计时器设为5min。", "计时器设为五分钟。"),
]

# 2. A number agrees with the ordinary noun after it (gender from the lexicon; German case
#    from the preposition; Spanish apocope and feminine hundreds).
#    en: English numerals do not agree with nouns; the class does not arise.
#    nl: Dutch numerals do not agree with nouns ("één uur", "één dag"); does not arise.
#    zh: Chinese has no gender; its counterpart is 两 (class 6).
AGREEMENT = [
    ("de", "Der Timer läuft noch 1 Stunde.", "Der Timer läuft noch eine Stunde."),
    ("de", "Das Fenster ist seit 1 h offen.", "Das Fenster ist seit einer Stunde offen."),
    ("de", "1 Gerät ist noch eingeschaltet.", "ein Gerät ist noch eingeschaltet."),
    ("de", "Ich erinnere dich in 1 Tag.", "Ich erinnere dich in einem Tag."),
    ("es", "Faltan 21 días para Navidad.", "Faltan veintiún días para Navidad."),
    ("es", "Queda 1 hora en el temporizador.", "Queda una hora en el temporizador."),
    ("es", "El evento es en 1 día.", "El evento es en un día."),
    ("es", "Hay 200 personas inscritas.", "Hay doscientas personas inscritas."),
    ("fr", "Le chauffage est réglé pour 21 heures.",
     "Le chauffage est réglé pour vingt et une heures."),
    ("fr", "1 personne est à la maison.", "une personne est à la maison."),
    ("fr", "Il reste 31 minutes.", "Il reste trente et une minutes."),
    ("it", "Manca 1 ora alla fine.", "Manca un'ora alla fine."),
    ("it", "La sveglia suona alle 21:30.", "La sveglia suona alle ventuno e trenta."),
    ("it", "C'è 1 persona in casa.", "C'è una persona in casa."),
    ("it", "Il filtro dura 21 giorni.", "Il filtro dura ventun giorni."),
]

# 3. Dates without a year.
DATES = [
    ("en", "Your next trash pickup is on 12/24.", "Your next trash pickup is on December "
     "twenty-fourth."),
    ("de", "Der Termin ist am 24.12.", "Der Termin ist am vierundzwanzigsten Dezember."),
    ("fr", "La collecte est le 24/12.", "La collecte est le vingt-quatre décembre."),
    ("es", "La recogida es el 24/12.", "La recogida es el veinticuatro de diciembre."),
    ("it", "La raccolta è il 24/12.", "La raccolta è il ventiquattro dicembre."),
    ("nl", "De afspraak is op 1-12.", "De afspraak is op één december."),
    ("nl", "Het afval wordt opgehaald op 24/12.",
     "Het afval wordt opgehaald op vierentwintig december."),
    ("zh", "垃圾在12月24日收取。", "垃圾在十二月二十四日收取。"),
]

# 4. Ordinals outside dates. German writes them with a dot and they take the adjective
#    ending; the other languages write a suffix.
ORDINALS = [
    ("de", "Die Lampe ist im 2. Stock.", "Die Lampe ist im zweiten Stock."),
    ("de", "Du bist auf dem 1. Platz.", "Du bist auf dem ersten Platz."),
    ("de", "Der 1. Platz geht an Anna.", "Der erste Platz geht an Anna."),
    ("de", "Urlaub vom 1. bis 3. Dezember.", "Urlaub vom ersten bis dritten Dezember."),
    ("en", "The lamp is on the 2nd floor.", "The lamp is on the second floor."),
    ("fr", "La lampe est au 2e étage.", "La lampe est au deuxième étage."),
    ("es", "La lámpara está en el 3.º piso.", "La lámpara está en el tercer piso."),
    ("it", "La lampada è al 2º piano.", "La lampada è al secondo piano."),
    ("nl", "De lamp staat op de 2e verdieping.", "De lamp staat op de tweede verdieping."),
    ("zh", "灯在第2层。", "灯在第二层。"),
]

# 5. Thousands separators, French and Spanish/Italian with an ordinary space.
THOUSANDS = [
    ("en", "The town has 1,000 inhabitants.", "The town has one thousand inhabitants."),
    ("de", "Der Ort hat 1.000 Einwohner.", "Der Ort hat eintausend Einwohner."),
    ("fr", "La ville compte 1 000 habitants.", "La ville compte mille habitants."),
    ("fr", "Le four consomme 2 400 W.", "Le four consomme deux mille quatre cents watts."),
    ("es", "El pueblo tiene 1 000 habitantes.", "El pueblo tiene mil habitantes."),
    ("it", "Il paese ha 1 000 abitanti.", "Il paese ha mille abitanti."),
    ("nl", "Het dorp heeft 1.000 inwoners.", "Het dorp heeft duizend inwoners."),
    ("zh", "这个镇有1,000人。", "这个镇有一千人。"),
]

# 6. Chinese 两 and the rest of issue 15's Chinese list.
#    Other languages: 两 is Chinese only; the class does not arise.
CHINESE = [
    ("zh", "计时器还剩2分钟。", "计时器还剩两分钟。"),
    ("zh", "会议在2点半开始。", "会议在两点半开始。"),
    ("zh", "这台电视2000元。", "这台电视两千元。"),
    ("zh", "烤箱功率2400W。", "烤箱功率两千四百瓦。"),
    ("zh", "滤网已经用了2年。", "滤网已经用了两年。"),
    ("zh", "小区有2万人。", "小区有两万人。"),
    ("zh", "室外PM2.5为35。", "室外PM二点五为三十五。"),
    ("zh", "明天气温10-12℃。", "明天气温十到十二摄氏度。"),
    ("zh", "电费是￥12.50。", "电费是十二元五角。"),
]

# 7. "1" before a decimal comma is "eins"/"one"/"un"/"uno", never the article.
DECIMAL_ONE = [
    ("en", "Today you used 1.2 kWh.", "Today you used one point two kilowatt hours."),
    ("de", "Heute wurden 1,2 kWh verbraucht.",
     "Heute wurden eins Komma zwei Kilowattstunden verbraucht."),
    ("fr", "Aujourd'hui 1,2 kWh consommés.",
     "Aujourd'hui un virgule deux kilowattheure consommés."),
    ("es", "Hoy se consumieron 1,2 kWh.", "Hoy se consumieron uno coma dos kilovatios hora."),
    ("it", "Oggi consumati 1,2 kWh.", "Oggi consumati uno virgola due chilowattora."),
    ("nl", "Vandaag 1,2 kWh verbruikt.", "Vandaag één komma twee kilowattuur verbruikt."),
    ("zh", "今天用电1.2kWh。", "今天用电一点二千瓦时。"),
]

# 8. Phone numbers are read digit by digit in their groups (French in pairs).
PHONES = [
    ("en", "Call 020 7946 0958.", "Call oh two oh, seven nine four six, oh nine five eight."),
    ("de", "Ruf 030 12345678 an.",
     "Ruf null drei null, eins zwei drei vier fünf sechs sieben acht an."),
    ("fr", "Appelez le 06 12 34 56 78.",
     "Appelez le zéro six, douze, trente-quatre, cinquante-six, soixante-dix-huit."),
    ("es", "Llama al 612 345 678.", "Llama al seis uno dos, tres cuatro cinco, seis siete ocho."),
    ("it", "Chiama lo 02 1234567.", "Chiama lo zero due, uno due tre quattro cinque sei sette."),
    ("nl", "Bel 06-12345678.", "Bel nul zes, één twee drie vier vijf zes zeven acht."),
    ("zh", "请拨打13812345678。", "请拨打幺三八幺二三四五六七八。"),
    ("zh", "请拨打010-12345678。", "请拨打零幺零，幺二三四五六七八。"),
]

# 9. Years. fr/es/it read a year as the plain number ("mille neuf cent quatre-vingt-dix-
#    neuf", "mil novecientos noventa y nueve"); the class does not arise there.
YEARS = [
    ("en", "The house was built in 1999.", "The house was built in nineteen ninety-nine."),
    ("de", "Das Haus wurde 1999 gebaut.",
     "Das Haus wurde neunzehnhundertneunundneunzig gebaut."),
    ("de", "Das Dorf hat 1999 Einwohner.",
     "Das Dorf hat eintausendneunhundertneunundneunzig Einwohner."),
    ("nl", "Het huis is gebouwd in 1999.", "Het huis is gebouwd in negentien negenennegentig."),
    ("zh", "房子建于1999年。", "房子建于一九九九年。"),
]

# 10. The smaller ones: abbreviations, model numbers, Italian accents, Spanish "primer",
#     Chinese IP addresses.
SMALLER = [
    ("en", "Your appointment is on Dec 3rd.", "Your appointment is on December third."),
    ("en", "The package is at 12 Main St.", "The package is at twelve Main Street."),
    ("en", "The PC has an RTX 4090.", "The PC has an RTX forty ninety."),
    ("de", "Das Paket liegt in der Hauptstr. 5.", "Das Paket liegt in der Hauptstraße fünf."),
    ("de", "Der Akku hält noch 3 Std.", "Der Akku hält noch drei Stunden."),
    ("de", "Müllabfuhr am Di. 10.12.", "Müllabfuhr am Dienstag zehnten Dezember."),
    ("de", "Der PC hat eine RTX 4090.", "Der PC hat eine RTX vierzig neunzig."),
    ("fr", "Le PC a une RTX 4090.", "Le PC a une RTX quarante quatre-vingt-dix."),
    ("es", "La lámpara está en el 1.º piso.", "La lámpara está en el primer piso."),
    ("es", "El PC tiene una RTX 4090.", "El PC tiene una RTX cuarenta noventa."),
    ("it", "Ci sono 123 elementi.", "Ci sono centoventitré elementi."),
    ("it", "Fuori ci sono 33 gradi.", "Fuori ci sono trentatré gradi."),
    ("nl", "Je afspraak is met Dr. Jansen.", "Je afspraak is met dokter Jansen."),
    ("nl", "De pc heeft een RTX 4090.", "De pc heeft een RTX veertig negentig."),
    ("zh", "路由器地址是192.168.1.1。", "路由器地址是一九二点一六八点一点一。"),
    ("zh", "电脑有RTX 4090显卡。", "电脑有RTX四零九零显卡。"),
]

ALL = {
    "minutes": MINUTES, "agreement": AGREEMENT, "dates": DATES, "ordinals": ORDINALS,
    "thousands": THOUSANDS, "chinese": CHINESE, "decimal_one": DECIMAL_ONE, "phones": PHONES,
    "years": YEARS, "smaller": SMALLER,
}


@pytest.mark.parametrize(
    ("language", "written", "spoken"),
    [pytest.param(*case, id=f"{name}-{case[0]}-{i}")
     for name, cases in ALL.items() for i, case in enumerate(cases)],
)
def test_issue_15_class(language: str, written: str, spoken: str) -> None:
    assert normalize_text(written, language) == spoken
