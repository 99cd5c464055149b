"""Can the server tell a request's language from its text? A study on Home Assistant-like
sentences, for docs/home-assistant-languages.md.

Home Assistant never sends the language. Three ways to get it to the engine:
1. per-language voice ids (``de-female``): the voice says it; exact whenever the text is in
   the pipeline's language;
2. language identification on the text (py3langid, a maintained langid.py fork);
3. no language (upstream's language-free prompt).

This prints, for py3langid (restricted to the Home Assistant languages): accuracy on short
assistant replies and on LLM-length replies, how often it would overrule a correct voice
language (a German voice reading German text, told "not German"), and its time per call;
and the same for the server's script guard (:mod:`wyoming_omnivoice.speech.request_language`).

    pip install py3langid   # for this study only; the server does not use it
    python -m benchmarks.language_id_study
"""

from __future__ import annotations

import statistics
import time

from wyoming_omnivoice.speech.request_language import text_language

#: Short replies as Home Assistant's Assist speaks them, per OmniVoice language id.
SHORT: dict[str, list[str]] = {
    "en": ["Turned on the kitchen light.", "The temperature is 21 degrees.",
           "Timer set for 10 minutes.", "The front door is locked.",
           "Sorry, I couldn't find that device."],
    "de": ["Das Küchenlicht ist an.", "Es sind 21 Grad.", "Timer auf 10 Minuten gestellt.",
           "Die Haustür ist abgeschlossen.", "Das Gerät habe ich nicht gefunden."],
    "fr": ["J'ai allumé la lumière de la cuisine.", "Il fait 21 degrés.",
           "Minuteur réglé sur 10 minutes.", "La porte d'entrée est verrouillée.",
           "Désolé, je n'ai pas trouvé cet appareil."],
    "es": ["He encendido la luz de la cocina.", "La temperatura es de 21 grados.",
           "Temporizador de 10 minutos.", "La puerta principal está cerrada.",
           "Lo siento, no encontré ese dispositivo."],
    "it": ["Ho acceso la luce della cucina.", "Ci sono 21 gradi.", "Timer impostato su 10 minuti.",
           "La porta d'ingresso è chiusa.", "Non ho trovato quel dispositivo."],
    "nl": ["Het keukenlicht is aan.", "Het is 21 graden.", "Timer ingesteld op 10 minuten.",
           "De voordeur is op slot.", "Sorry, dat apparaat kon ik niet vinden."],
    "pl": ["Włączyłem światło w kuchni.", "Jest 21 stopni.", "Minutnik ustawiony na 10 minut.",
           "Drzwi wejściowe są zamknięte.", "Nie znalazłem tego urządzenia."],
    "pt": ["Liguei a luz da cozinha.", "A temperatura é de 21 graus.",
           "Temporizador definido para 10 minutos.", "A porta da frente está trancada.",
           "Desculpe, não encontrei esse dispositivo."],
    "sv": ["Jag tände lampan i köket.", "Det är 21 grader.", "Timer inställd på 10 minuter.",
           "Ytterdörren är låst.", "Jag hittade inte den enheten."],
    "cs": ["Zapnul jsem světlo v kuchyni.", "Je 21 stupňů.", "Časovač nastaven na 10 minut.",
           "Vchodové dveře jsou zamčené.", "Toto zařízení jsem nenašel."],
    "ru": ["Я включил свет на кухне.", "Сейчас 21 градус.", "Таймер на 10 минут.",
           "Входная дверь заперта.", "Не нашёл это устройство."],
    "uk": ["Я увімкнув світло на кухні.", "Зараз 21 градус.", "Таймер на 10 хвилин.",
           "Вхідні двері зачинені.", "Не знайшов цей пристрій."],
    "tr": ["Mutfak ışığını açtım.", "Sıcaklık 21 derece.", "Zamanlayıcı 10 dakikaya ayarlandı.",
           "Ön kapı kilitli.", "Üzgünüm, o cihazı bulamadım."],
    "ja": ["キッチンの電気をつけました。", "気温は21度です。", "タイマーを10分にセットしました。",
           "玄関のドアは施錠されています。", "そのデバイスが見つかりませんでした。"],
    "zh": ["已打开厨房的灯。", "现在温度是21度。", "已设置10分钟的计时器。", "前门已锁好。",
           "抱歉，我找不到那个设备。"],
}

#: LLM-length replies (a conversation agent's answer).
LONG: dict[str, str] = {
    "en": "Good morning! It is sunny today with a high of 24 degrees. You have two meetings, "
          "and the washing machine finished an hour ago, so you may want to empty it.",
    "de": "Guten Morgen! Heute ist es sonnig bei bis zu 24 Grad. Du hast zwei Termine, und "
          "die Waschmaschine ist seit einer Stunde fertig, du könntest sie also ausräumen.",
    "fr": "Bonjour ! Aujourd'hui il fait beau avec 24 degrés au maximum. Vous avez deux "
          "rendez-vous, et la machine à laver a terminé il y a une heure.",
    "es": "¡Buenos días! Hoy hace sol con una máxima de 24 grados. Tienes dos reuniones y la "
          "lavadora terminó hace una hora, así que quizá quieras vaciarla.",
    "it": "Buongiorno! Oggi c'è il sole con una massima di 24 gradi. Hai due riunioni e la "
          "lavatrice ha finito un'ora fa, quindi potresti svuotarla.",
    "nl": "Goedemorgen! Het is vandaag zonnig met een maximum van 24 graden. Je hebt twee "
          "afspraken en de wasmachine is een uur geleden klaar, dus je kunt hem leeghalen.",
    "pl": "Dzień dobry! Dziś jest słonecznie, do 24 stopni. Masz dwa spotkania, a pralka "
          "skończyła godzinę temu, więc możesz ją opróżnić.",
    "pt": "Bom dia! Hoje está sol com máxima de 24 graus. Você tem duas reuniões e a máquina "
          "de lavar terminou há uma hora, então talvez queira esvaziá-la.",
    "sv": "God morgon! Det är soligt i dag med upp till 24 grader. Du har två möten och "
          "tvättmaskinen blev klar för en timme sedan, så du kanske vill tömma den.",
    "cs": "Dobré ráno! Dnes je slunečno s maximem 24 stupňů. Máte dvě schůzky a pračka "
          "doprala před hodinou, takže ji možná budete chtít vyndat.",
    "ru": "Доброе утро! Сегодня солнечно, до 24 градусов. У вас две встречи, а стиральная "
          "машина закончила час назад, так что её можно разгрузить.",
    "uk": "Доброго ранку! Сьогодні сонячно, до 24 градусів. У вас дві зустрічі, а пральна "
          "машина закінчила годину тому, тож її можна розвантажити.",
    "tr": "Günaydın! Bugün hava güneşli ve en yüksek sıcaklık 24 derece. İki toplantın var "
          "ve çamaşır makinesi bir saat önce bitti, boşaltmak isteyebilirsin.",
    "ja": "おはようございます。今日は晴れで最高気温は24度です。"
          "会議が二つあり、洗濯機は一時間前に終わっているので、取り出してもいいかもしれません。",
    "zh": "早上好！今天天气晴朗，最高气温24度。"
          "你有两个会议，洗衣机一个小时前已经洗好了，可以把衣服拿出来了。",
}

HA_LANGIDS = ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "sv", "cs", "ru", "uk", "tr",
              "ja", "zh", "da", "no", "fi", "hu", "ro", "sk", "sl", "hr", "bg", "el", "ko",
              "ar", "he", "hi", "th", "vi", "id", "ca", "lt", "lv", "et"]


def _langid(languages: list[str] | None):  # type: ignore[no-untyped-def]
    from py3langid import langid

    langid.set_languages(languages)
    return langid


def main() -> None:
    for languages, label in ((None, "all 97 py3langid languages"),
                             (HA_LANGIDS, f"restricted to {len(HA_LANGIDS)} HA languages")):
        print(f"== py3langid, {label}")
        try:
            identifier = _langid(languages)
        except ImportError:
            raise SystemExit("pip install py3langid (for this study only)") from None
        _study(identifier)
    _cross_script()


def _study(identifier) -> None:  # type: ignore[no-untyped-def]
    for name, samples in (("short replies", {k: v for k, v in SHORT.items()}),
                          ("LLM-length replies", {k: [v] for k, v in LONG.items()})):
        right = total = 0
        times: list[float] = []
        wrong: list[str] = []
        guard_overrules = 0
        for language, texts in samples.items():
            for text in texts:
                began = time.perf_counter()
                guess, _ = identifier.classify(text)
                times.append(time.perf_counter() - began)
                total += 1
                if guess == language:
                    right += 1
                else:
                    wrong.append(f"{language}->{guess}: {text[:40]}")
                if text_language(language, text) != language:
                    guard_overrules += 1
        print(f"{name}: py3langid {right}/{total} = {100 * right / total:.1f} % right "
              f"(median {statistics.median(times) * 1000:.2f} ms); would overrule the correct "
              f"voice language in {total - right} of {total}; the script guard overrules it "
              f"in {guard_overrules} of {total}")
        for line in wrong:
            print("   wrong:", line)


def _cross_script() -> None:
    """Text in another script than the voice's language."""
    cross = [("de", SHORT["ru"][0]), ("en", SHORT["ja"][1]), ("fr", SHORT["zh"][0]),
             ("ru", SHORT["en"][0]), ("zh", SHORT["ru"][1]), ("ja", SHORT["de"][0])]
    kept = sum(text_language(voice, text) == voice for voice, text in cross)
    print(f"text in another script: the script guard keeps the voice's language in {kept} "
          f"of {len(cross)} (0 is right)")


if __name__ == "__main__":
    main()
