"""Issue 24's classes, per language, for the languages added after the first six: numbers
that agree with the noun after them, decimals, negatives, thousands, units, percentages,
clock times, durations, dates with and without a year, ordinals, years, currency and
abbreviations.

Each case is a Home Assistant-style sentence and the words a native speaker says for it,
written by hand (never copied from the normaliser's output). The sentence files in
``normalize_cases/`` hold more; these pin each class down on its own.
"""

from __future__ import annotations

import pytest

from wyoming_omnivoice.text.normalize import normalize_text, supports_language

CASES: dict[str, list[tuple[str, str, str]]] = {
    "pl": [
        ("agreement", "Włączone są 2 lampy i 2 światła.",
         "Włączone są dwie lampy i dwa światła."),
        ("agreement", "Zostały 2 godziny.", "Zostały dwie godziny."),
        ("agreement", "Zostało 21 dni.", "Zostało dwadzieścia jeden dni."),
        ("agreement", "Za 1 minutę.", "Za jedną minutę."),
        ("agreement", "Od 1 godziny.", "Od jednej godziny."),
        ("decimal", "Zużycie 1,5 kWh.", "Zużycie jeden przecinek pięć kilowatogodziny."),
        ("negative", "Zamrażarka ma -18 °C.",
         "Zamrażarka ma minus osiemnaście stopni Celsjusza."),
        ("thousands", "Licznik pokazuje 12 500 kWh.",
         "Licznik pokazuje dwanaście tysięcy pięćset kilowatogodzin."),
        ("unit", "Opady 3 mm.", "Opady trzy milimetry."),
        ("unit", "Prędkość 1 m/s.", "Prędkość jeden metr na sekundę."),
        ("percent", "Roleta jest otwarta w 50%.", "Roleta jest otwarta w pięćdziesiąt procent."),
        ("time", "Przed 7:00.", "Przed siódmą."),
        ("time", "Alarm o 0:00.", "Alarm o północy."),
        ("duration", "Pozostały czas: 2 h 5 min.", "Pozostały czas: dwie godziny i pięć minut."),
        ("date", "Termin do 1 stycznia.", "Termin do pierwszego stycznia."),
        ("date_year", "Urodzony 3 maja 2020 r.",
         "Urodzony trzeciego maja dwa tysiące dwudziestego roku."),
        ("ordinal", "To jest 3. piętro.", "To jest trzecie piętro."),
        ("year", "Od 2015 roku.", "Od dwa tysiące piętnastego roku."),
        ("currency", "Kosztuje 1 zł.", "Kosztuje jeden złoty."),
        ("currency", "Kosztuje 5 €.", "Kosztuje pięć euro."),
        ("abbreviation", "Np. lampa w kuchni.", "Na przykład lampa w kuchni."),
    ],
    "ru": [
        ("agreement", "Через 1 минуту.", "Через одну минуту."),
        ("agreement", "Осталось 21 минута.", "Осталось двадцать одна минута."),
        ("agreement", "Ниже 1 градуса.", "Ниже одного градуса."),
        ("agreement", "Открыты 2 двери.", "Открыты две двери."),
        ("decimal", "Заряд 0,5 кВт·ч.", "Заряд ноль целых пять десятых киловатт-часа."),
        ("negative", "В морозилке -18 °C.", "В морозилке минус восемнадцать градусов Цельсия."),
        ("thousands", "Пробег 12 500 км.", "Пробег двенадцать тысяч пятьсот километров."),
        ("unit", "Осадки 3 мм.", "Осадки три миллиметра."),
        ("percent", "Штора открыта на 50%.", "Штора открыта на пятьдесят процентов."),
        ("time", "Сейчас 1:00.", "Сейчас час."),
        ("time", "Будильник на 6:05.", "Будильник на шесть ноль пять."),
        ("duration", "Осталось 2 ч 5 мин.", "Осталось два часа пять минут."),
        ("date", "Срок до 1 января.", "Срок до первого января."),
        ("date_year", "Сегодня 01.01.2025.",
         "Сегодня первое января две тысячи двадцать пятого года."),
        ("ordinal", "Квартира на 5-м этаже.", "Квартира на пятом этаже."),
        ("ordinal", "Это 3-й подъезд.", "Это третий подъезд."),
        ("year", "Работает с 2015 года.", "Работает с две тысячи пятнадцатого года."),
        ("year", "Дом построен в 1999 г.",
         "Дом построен в тысяча девятьсот девяносто девятом году."),
        ("currency", "Цена 1 €.", "Цена один евро."),
        ("currency", "Цена 2 ₽.", "Цена два рубля."),
        ("abbreviation", "Свет, музыка и т.д.", "Свет, музыка и так далее."),
    ],
    "pt": [
        ("agreement", "Há 1 pessoa em casa.", "Há uma pessoa em casa."),
        ("agreement", "Estão 32 lâmpadas ligadas.", "Estão trinta e duas lâmpadas ligadas."),
        ("agreement", "O sistema tem 2 dias.", "O sistema tem dois dias."),
        ("agreement", "Estão 2 televisões ligadas.", "Estão duas televisões ligadas."),
        ("decimal", "Consumo de 0,5 kWh.", "Consumo de zero vírgula cinco quilowatts-hora."),
        ("negative", "O congelador está a -18 °C.",
         "O congelador está a menos dezoito graus Celsius."),
        ("thousands", "A vila tem 1 000 habitantes.", "A vila tem mil habitantes."),
        ("thousands", "O contador marca 12.500 kWh.",
         "O contador marca doze mil e quinhentos quilowatts-hora."),
        ("unit", "Choveu 3 mm.", "Choveu três milímetros."),
        ("percent", "A persiana está a 50%.", "A persiana está a cinquenta por cento."),
        ("time", "O alarme toca às 0:00.", "O alarme toca à meia-noite."),
        ("time", "A rega começa às 1:00.", "A rega começa à uma hora."),
        ("time", "O alarme toca às 6:05.", "O alarme toca às seis e cinco."),
        ("duration", "Faltam 2 h 5 min.", "Faltam duas horas e cinco minutos."),
        ("date", "A recolha é a 1 de janeiro.", "A recolha é a um de janeiro."),
        ("date_year", "Nasceu a 3 de maio de 2020.",
         "Nasceu a três de maio de dois mil e vinte."),
        ("ordinal", "O 1.º andar.", "O primeiro andar."),
        ("year", "Desde 2015.", "Desde dois mil e quinze."),
        ("currency", "Custa 1 €.", "Custa um euro."),
        ("currency", "Custa 5 $.", "Custa cinco dólares."),
        ("abbreviation", "Luzes, estores, etc.", "Luzes, estores, etcétera."),
    ],
    "pt-BR": [
        ("agreement", "Tem 1 pessoa em casa.", "Tem uma pessoa em casa."),
        ("agreement", "Tem 32 lâmpadas ligadas.", "Tem trinta e duas lâmpadas ligadas."),
        ("decimal", "Consumo de 1,5 kWh.", "Consumo de um vírgula cinco quilowatts-hora."),
        ("negative", "O freezer está a -18 °C.", "O freezer está a menos dezoito graus Celsius."),
        ("thousands", "O medidor marca 12.500 kWh.",
         "O medidor marca doze mil e quinhentos quilowatts-hora."),
        ("unit", "Faltam 17 km.", "Faltam dezessete quilômetros."),
        ("percent", "A cortina está em 50%.", "A cortina está em cinquenta por cento."),
        ("time", "O alarme toca às 14h.", "O alarme toca às catorze horas."),
        ("duration", "Faltam 2 h 5 min.", "Faltam duas horas e cinco minutos."),
        ("date", "A coleta é em 1/12.", "A coleta é em primeiro de dezembro."),
        ("date_year", "Nasceu em 3 de maio de 2020.",
         "Nasceu em três de maio de dois mil e vinte."),
        ("ordinal", "O 1º andar.", "O primeiro andar."),
        ("year", "Desde 2015.", "Desde dois mil e quinze."),
        ("currency", "Custa R$ 1,00.", "Custa um real."),
        ("currency", "Custa R$ 2,50.", "Custa dois reais e cinquenta centavos."),
        ("abbreviation", "Fale com o Sr. Lima.", "Fale com o senhor Lima."),
    ],
    "sv": [
        ("agreement", "Det är 1 dygn kvar.", "Det är ett dygn kvar."),
        ("agreement", "Det var 1 natt.", "Det var en natt."),
        ("agreement", "Det finns 1 öppet fönster.", "Det finns ett öppet fönster."),
        ("decimal", "Förbrukning 1,5 kWh.", "Förbrukning ett komma fem kilowattimmar."),
        ("negative", "Frysen håller -18 °C.", "Frysen håller minus arton grader Celsius."),
        ("thousands", "Mätaren visar 12 500 kWh.",
         "Mätaren visar tolvtusen femhundra kilowattimmar."),
        ("unit", "Nederbörd 3 mm.", "Nederbörd tre millimeter."),
        ("unit", "Paketet väger 1 kg.", "Paketet väger ett kilo."),
        ("percent", "Persiennen är öppen till 50 %.", "Persiennen är öppen till femtio procent."),
        ("time", "Larmet ringer kl. 00:00.", "Larmet ringer klockan tolv på natten."),
        ("time", "Dörren låses vid 0:00.", "Dörren låses vid midnatt."),
        ("time", "Det är 1:15.", "Det är ett femton."),
        ("duration", "Kvar: 2 h 5 min.", "Kvar: två timmar och fem minuter."),
        ("date", "Från den 1 januari.", "Från den första januari."),
        ("date", "Till den 20 maj.", "Till den tjugonde maj."),
        ("date_year", "Född den 3 maj 2020.", "Född den tredje maj tvåtusentjugo."),
        ("ordinal", "Den 1:a platsen.", "Den första platsen."),
        ("year", "Sedan 2015.", "Sedan tvåtusenfemton."),
        ("currency", "Det kostar 1 kr.", "Det kostar en krona."),
        ("currency", "Det kostar 5 €.", "Det kostar fem euro."),
        ("abbreviation", "Lampor, t.ex. i köket.", "Lampor, till exempel i köket."),
    ],
    "da": [
        ("agreement", "Der er 1 døgn tilbage.", "Der er et døgn tilbage."),
        ("agreement", "Der er 1 person hjemme.", "Der er en person hjemme."),
        ("agreement", "Om 1 sekund.", "Om et sekund."),
        ("decimal", "Forbrug 1,5 kWh.", "Forbrug en komma fem kilowatttimer."),
        ("negative", "Fryseren holder -18 °C.", "Fryseren holder minus atten grader celsius."),
        ("thousands", "Måleren viser 12.500 kWh.",
         "Måleren viser tolv tusind fem hundrede kilowatttimer."),
        ("unit", "Nedbør 3 mm.", "Nedbør tre millimeter."),
        ("unit", "Pakken vejer 1 kg.", "Pakken vejer et kilo."),
        ("percent", "Persiennen er åben 50 %.", "Persiennen er åben halvtreds procent."),
        ("time", "Alarmen ringer kl. 00:00.", "Alarmen ringer klokken tolv om natten."),
        ("time", "Døren låses ved 0:00.", "Døren låses ved midnat."),
        ("duration", "Tilbage: 2 t 5 min.", "Tilbage: to timer og fem minutter."),
        ("date", "Fra den 1. januar.", "Fra den første januar."),
        ("date", "Til den 31. maj.", "Til den enogtredivte maj."),
        ("date_year", "Født den 3. maj 2020.", "Født den tredje maj to tusind og tyve."),
        ("ordinal", "Hun fik en 1. plads.", "Hun fik en første plads."),
        ("year", "Siden 2015.", "Siden to tusind og femten."),
        ("year", "Bygget i 1850.", "Bygget i atten hundrede og halvtreds."),
        ("currency", "Det koster 1 kr.", "Det koster en krone."),
        ("currency", "Det koster 5 €.", "Det koster fem euro."),
        ("abbreviation", "Lamper, f.eks. i køkkenet.", "Lamper, for eksempel i køkkenet."),
    ],
}


@pytest.mark.parametrize(
    ("language", "written", "spoken"),
    [pytest.param(lang, w, s, id=f"{lang}-{kind}-{i}") for lang, cases in CASES.items()
     for i, (kind, w, s) in enumerate(cases)],
)
def test_class(language: str, written: str, spoken: str) -> None:
    assert normalize_text(written, language) == spoken


@pytest.mark.parametrize("language", sorted(CASES))
def test_language_is_on_and_covers_every_class(language: str) -> None:
    assert supports_language(language)
    kinds = {kind for kind, _, _ in CASES[language]}
    assert kinds >= {"agreement", "decimal", "negative", "thousands", "unit", "percent",
                     "time", "duration", "date", "date_year", "ordinal", "year", "currency",
                     "abbreviation"}
