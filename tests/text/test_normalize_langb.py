"""Issue 32's classes for Slovak, Slovene, Croatian, Bulgarian and Catalan: numbers that
agree with the noun after them (gender; the Slavic 1 / 2-4 / 5+, the Slovene dual, the
Bulgarian counted form, Catalan feminines), decimals, negatives, thousands, units,
percentages, clock times, durations, dates with and without a year, ordinals, years,
currency and abbreviations.

Each case is a Home Assistant-style sentence and the words a native speaker says for it,
written by hand (never copied from the normaliser's output). The sentence files in
``normalize_cases/`` hold more; these pin each class down on its own.
"""

from __future__ import annotations

import importlib

import pytest

from wyoming_omnivoice.text.normalize import normalize_text, supports_language, table_module
from wyoming_omnivoice.text.normalize import numbers as N
from wyoming_omnivoice.text.normalize.numbers import Num
from wyoming_omnivoice.text.normalize.slavic import shared as S

CASES: dict[str, list[tuple[str, str, str]]] = {
    "sk": [
        ("agreement", "Svieti 1 žiarovka a 2 svetlá.", "Svieti jedna žiarovka a dve svetlá."),
        ("agreement", "Zostáva 21 dní.", "Zostáva dvadsaťjeden dní."),
        ("agreement", "Za 1 minútu.", "Za jednu minútu."),
        ("decimal", "Spotreba 1,5 kWh.", "Spotreba jedna celá päť kilowatthodiny."),
        ("negative", "Mraznička má -18 °C.", "Mraznička má mínus osemnásť stupňov Celzia."),
        ("thousands", "Počítadlo ukazuje 12 500 kWh.",
         "Počítadlo ukazuje dvanásťtisíc päťsto kilowatthodín."),
        ("unit", "Zrážky 3 mm.", "Zrážky tri milimetre."),
        ("percent", "Roleta je otvorená na 50 %.", "Roleta je otvorená na päťdesiat percent."),
        ("time", "Je 14:30.", "Je štrnásť tridsať."),
        ("time", "Budík do 6:00.", "Budík do šiestej."),
        ("duration", "Zostáva 2 h 5 min.", "Zostáva dve hodiny a päť minút."),
        ("date", "Otvorené od 1. do 3. mája.", "Otvorené od prvého do tretieho mája."),
        ("date_year", "Narodil sa 3. mája 2020.", "Narodil sa tretieho mája dvetisíc dvadsať."),
        ("ordinal", "Je to 3. poschodie.", "Je to tretie poschodie."),
        ("year", "V roku 2020.", "V roku dvetisíc dvadsať."),
        ("currency", "Cena je 1 €.", "Cena je jedno euro."),
        ("currency", "Cena je 2 €.", "Cena je dve eurá."),
        ("abbreviation", "Svetlá, rolety atď.", "Svetlá, rolety a tak ďalej."),
    ],
    "sl": [
        ("agreement", "Prižgani sta 2 luči.", "Prižgani sta dve luči."),
        ("agreement", "Še 2 dneva.", "Še dva dneva."),
        ("agreement", "Ostalo je 101 minuta.", "Ostalo je sto ena minuta."),
        ("agreement", "Za 1 minuto.", "Za eno minuto."),
        ("decimal", "Poraba 1,5 kWh.", "Poraba ena cela pet kilovatne ure."),
        ("negative", "Zamrzovalnik ima -18 °C.",
         "Zamrzovalnik ima minus osemnajst stopinj Celzija."),
        ("thousands", "Števec kaže 12 500 kWh.",
         "Števec kaže dvanajst tisoč petsto kilovatnih ur."),
        ("unit", "Padavine 2 mm.", "Padavine dva milimetra."),
        ("percent", "Senčilo je odprto 50 %.", "Senčilo je odprto petdeset odstotkov."),
        ("time", "Ura je 14:30.", "Ura je štirinajst trideset."),
        ("time", "Budilka do 6:00.", "Budilka do šestih."),
        ("duration", "Še 2 h 5 min.", "Še dve uri in pet minut."),
        ("date", "Odprto od 1. do 3. maja.", "Odprto od prvega do tretjega maja."),
        ("date_year", "Rodil se je 3. maja 2020.",
         "Rodil se je tretjega maja dva tisoč dvajset."),
        ("ordinal", "To je 3. nadstropje.", "To je tretje nadstropje."),
        ("year", "Leta 2020.", "Leta dva tisoč dvajset."),
        ("currency", "Cena je 1 €.", "Cena je en evro."),
        ("currency", "Cena je 3 €.", "Cena je trije evri."),
        ("abbreviation", "Luči, senčila itd.", "Luči, senčila in tako dalje."),
    ],
    "hr": [
        ("agreement", "Svijetli 1 žarulja i 2 svjetla.", "Svijetli jedna žarulja i dva svjetla."),
        ("agreement", "Ostalo je 21 dan.", "Ostalo je dvadeset jedan dan."),
        ("agreement", "Ostale su 22 minute.", "Ostale su dvadeset dvije minute."),
        ("decimal", "Potrošnja 1,5 kWh.", "Potrošnja jedan zarez pet kilovatsati."),
        ("negative", "Zamrzivač ima -18 °C.",
         "Zamrzivač ima minus osamnaest stupnjeva Celzija."),
        ("thousands", "Brojilo pokazuje 12 500 kWh.",
         "Brojilo pokazuje dvanaest tisuća petsto kilovatsati."),
        ("unit", "Oborine 3 mm.", "Oborine tri milimetra."),
        ("percent", "Roleta je otvorena 50 %.", "Roleta je otvorena pedeset posto."),
        ("time", "Alarm u 21:00.", "Alarm u dvadeset jedan sat."),
        ("duration", "Preostalo 2 h 5 min.", "Preostalo dva sata i pet minuta."),
        ("date", "Otvoreno od 1. do 3. svibnja.", "Otvoreno od prvog do trećeg svibnja."),
        ("date_year", "Rođen je 3. svibnja 2020.",
         "Rođen je trećeg svibnja dvije tisuće dvadesete."),
        ("ordinal", "To je 3. kat.", "To je treći kat."),
        ("year", "U 2020. godini.", "U dvije tisuće dvadesetoj godini."),
        ("currency", "Cijena je 1 €.", "Cijena je jedan euro."),
        ("currency", "Cijena je 5,20 €.", "Cijena je pet eura i dvadeset centi."),
        ("abbreviation", "Svjetla, rolete itd.", "Svjetla, rolete i tako dalje."),
        ("agreement", "Tajmer završava za 21 min.", "Tajmer završava za dvadeset jednu minutu."),
    ],
    "bg": [
        ("agreement", "Светят 1 крушка и 2 лампи.", "Светят една крушка и две лампи."),
        ("agreement", "Остават 21 дни.", "Остават двайсет и един дни."),
        ("agreement", "Активни са 5 сензора.", "Активни са пет сензора."),
        ("decimal", "Разход 1,5 kWh.", "Разход едно цяло и пет киловатчаса."),
        ("negative", "Фризерът е -18 °C.", "Фризерът е минус осемнайсет градуса."),
        ("thousands", "Броячът показва 12 500 kWh.",
         "Броячът показва дванайсет хиляди и петстотин киловатчаса."),
        ("unit", "Валежи 3 мм.", "Валежи три милиметра."),
        ("percent", "Щората е отворена 50 %.", "Щората е отворена петдесет процента."),
        ("time", "Алармата е в 21:00.", "Алармата е в двайсет и един часа."),
        ("duration", "Остават 2 ч 5 мин.", "Остават два часа и пет минути."),
        ("date", "Отворено до 1 май.", "Отворено до първи май."),
        ("date_year", "Роден е на 3 май 2020 г.",
         "Роден е на трети май две хиляди и двайсета година."),
        ("ordinal", "Това е 3-тият етаж.", "Това е третият етаж."),
        ("year", "Построена през 2020 г.", "Построена през две хиляди и двайсета година."),
        ("currency", "Цената е 1 лв.", "Цената е един лев."),
        ("currency", "Цената е 2,50 €.", "Цената е две евро и петдесет цента."),
        ("abbreviation", "Лампи, щори и т.н.", "Лампи, щори и така нататък."),
        ("unit", "Вятърът е 5 м/с.", "Вятърът е пет метра в секунда."),
    ],
    "ca": [
        ("agreement", "Falten 21 dies.", "Falten vint-i-un dies."),
        ("agreement", "Queden 1 hora i 2 minuts.", "Queden una hora i dos minuts."),
        ("agreement", "Hi ha 22 bombetes.", "Hi ha vint-i-dues bombetes."),
        ("decimal", "Consum de 0,5 kWh.", "Consum de zero coma cinc quilowatts hora."),
        ("negative", "El congelador és a -18 °C.", "El congelador és a menys divuit graus."),
        ("thousands", "El comptador marca 12.500 kWh.",
         "El comptador marca dotze mil cinc-cents quilowatts hora."),
        ("unit", "Pluja de 3 mm.", "Pluja de tres mil·límetres."),
        ("percent", "La persiana és al 50 %.", "La persiana és al cinquanta per cent."),
        ("time", "Alarma a les 21:00.", "Alarma a les vint-i-una."),
        ("time", "Alarma a les 7:05.", "Alarma a les set i cinc."),
        ("duration", "Queden 2 h 5 min.", "Queden dues hores i cinc minuts."),
        ("date", "Obert fins al 24/12.", "Obert fins al vint-i-quatre de desembre."),
        ("date", "Festa l'11 de setembre.", "Festa l'onze de setembre."),
        ("date_year", "Va néixer el 3 d'octubre de 2020.",
         "Va néixer el tres d'octubre de dos mil vint."),
        ("ordinal", "És al 4t pis.", "És al quart pis."),
        ("ordinal", "És a la 5a planta.", "És a la cinquena planta."),
        ("year", "L'any 2020.", "L'any dos mil vint."),
        ("currency", "Costa 1 €.", "Costa un euro."),
        ("abbreviation", "Llums, persianes, etc.", "Llums, persianes, etcètera."),
        ("decimal", "Queden 2,5 h.", "Queden dues coma cinc hores."),
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
def test_language_is_on_covers_every_class_and_names_every_unit(language: str) -> None:
    from wyoming_omnivoice.text.normalize import words

    assert supports_language(language)
    kinds = {kind for kind, _, _ in CASES[language]}
    assert kinds >= {"agreement", "decimal", "negative", "thousands", "unit", "percent",
                     "time", "duration", "date", "date_year", "ordinal", "year", "currency",
                     "abbreviation"}
    # a unit missing from the language's own table would fail the whole segment
    module = importlib.import_module(table_module(language))
    assert set(words.UNITS) <= set(module.RULES.units)


@pytest.mark.parametrize(("value", "croatian", "slovene"), [
    (1, S.ONE, S.ONE), (2, S.FEW, S.DUAL), (3, S.FEW, S.FEW), (5, S.MANY, S.MANY),
    (11, S.MANY, S.MANY), (12, S.MANY, S.MANY), (21, S.ONE, S.MANY), (22, S.FEW, S.MANY),
    (101, S.ONE, S.ONE), (102, S.FEW, S.DUAL), (104, S.FEW, S.FEW), (111, S.MANY, S.MANY),
])
def test_slavic_count_rules(value: int, croatian: int, slovene: int) -> None:
    num = Num(False, str(value), "")
    assert S.last_digit_form(num) == croatian
    assert S.dual_form(num) == slovene


def test_own_cardinals_read_digits_pairs_and_phone_numbers() -> None:
    # num2words has no Croatian or Bulgarian: their own cardinals are used everywhere
    importlib.import_module("wyoming_omnivoice.text.normalize.slavic.lang_hr")
    assert N.digits("305", "hr") == "tri nula pet"
    assert N.cardinal(2400, "hr") == "dvije tisuće četiristo"
    assert normalize_text("Nazovi 01 234 5678.", "hr") == (
        "Nazovi nula jedan, dva tri četiri, pet šest sedam osam.")
    assert normalize_text("Кодът е 007.", "bg") == "Кодът е нула нула седем."


@pytest.mark.parametrize(("language", "written", "spoken"), [
    ("bg", "1 000 000", "милион"), ("bg", "125", "сто двайсет и пет"),
    ("bg", "1100", "хиляда и сто"), ("bg", "21 000", "двайсет и една хиляди"),
    ("hr", "1 000 000", "milijun"), ("hr", "21 000", "dvadeset jedna tisuća"),
    ("hr", "5 000", "pet tisuća"), ("sk", "2 000 000", "dva milióny"),
])
def test_large_numbers(language: str, written: str, spoken: str) -> None:
    assert normalize_text(written, language) == spoken


def test_side_by_side_tool_shows_the_new_languages(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tools import normalize_side_by_side as tool

    monkeypatch.setattr("sys.argv", ["normalize_side_by_side.py"])
    assert tool.main() == 0
    out = capsys.readouterr().out
    for language in CASES:
        assert f"== {language} ({language}.tsv)" in out


@pytest.mark.parametrize("language", sorted(CASES))
def test_odd_input_is_read_without_a_failed_segment(
        language: str, caplog: pytest.LogCaptureFixture) -> None:
    # a rule that raises keeps its whole segment as written (and logs it): none may
    odd = ("99999999999999999999 % 1:2:3 € 0.0.0 -- -5- 31/02/2024 32.13.2024 0:00 23:59 "
           "RTX 4090 +421 900 123 456 1. 2. 3. 100. 2000. 1000000 0,05 -0,5 °C 12,345 kWh "
           "[unclosed 5 31. 12. 1999 2000 г. 1999. godine 1r 30è 40a 0 h 0 min")
    with caplog.at_level("WARNING"):
        assert isinstance(normalize_text(odd, language), str)
    assert not [r for r in caplog.records if "failed" in r.getMessage()]
