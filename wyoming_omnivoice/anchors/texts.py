"""Anchor sentences per language: what a designed voice says once to pin its identity.

About three seconds of speech each (the anchor is prepended to every request of its voice,
so a longer one costs decode time on every request; three seconds is the short end of what
upstream recommends for a cloning reference). Every Home Assistant language
(:mod:`.voices.ha_languages`) has its own, so a German voice is anchored on German speech. The
sentences are part of the anchor cache key: changing one rebuilds that language's anchors.
"""

from __future__ import annotations

ANCHOR_TEXTS: dict[str, str] = {
    "en": "Hello! This is how my voice sounds when I read aloud.",
    "zh": "你好！这就是我朗读时的声音。",
    "yue": "你好！呢個就係我幫你讀嘢嘅聲音。",
    "de": "Hallo! So klingt meine Stimme, wenn ich vorlese.",
    "fr": "Bonjour ! Voici ma voix quand je lis à voix haute.",
    "es": "¡Hola! Así suena mi voz cuando te leo algo en voz alta.",
    "it": "Ciao! Questa è la mia voce quando leggo ad alta voce.",
    "pt": "Olá! É assim que a minha voz soa quando leio em voz alta.",
    "nl": "Hallo! Zo klinkt mijn stem wanneer ik voorlees.",
    "ru": "Привет! Так звучит мой голос, когда я читаю вслух.",
    "ja": "こんにちは！これが私の読み上げの声です。",
    "ko": "안녕하세요! 제가 읽어 드리는 목소리입니다.",
    "pl": "Cześć! Tak brzmi mój głos, kiedy czytam na głos.",
    "sv": "Hej! Så här låter min röst när jag läser högt.",
    "da": "Hej! Sådan lyder min stemme, når jeg læser højt.",
    "nb": "Hei! Slik høres stemmen min ut når jeg leser høyt.",
    "fi": "Hei! Tältä ääneni kuulostaa, kun luen ääneen.",
    "tr": "Merhaba! Sana bir şey okurken sesim böyle çıkıyor.",
    "cs": "Ahoj! Takhle zní můj hlas, když čtu nahlas.",
    "uk": "Привіт! Так звучить мій голос, коли я читаю вголос.",
    "ar": "مرحبا! هكذا يبدو صوتي عندما أقرأ.",
    "hi": "नमस्ते! जब मैं पढ़ता हूँ तो मेरी आवाज़ ऐसी लगती है।",
    # Added with the per-language voices (one per Home Assistant language).
    "af": "Hallo! So klink my stem wanneer ek hardop lees.",
    "arb": "مرحبا! هكذا يبدو صوتي عندما أقرأ.",
    "bg": "Здравей! Така звучи гласът ми, когато чета на глас.",
    "bn": "নমস্কার! এটা আমার পড়ার কণ্ঠস্বর।",
    "bs": "Zdravo! Ovako zvuči moj glas kada čitam naglas.",
    "ca": "Hola! Així sona la meva veu quan llegeixo en veu alta.",
    "cy": "Helo! Dyma fy llais pan fyddaf yn darllen.",
    "el": "Γεια σου! Έτσι ακούγεται η φωνή μου όταν διαβάζω δυνατά.",
    "eo": "Saluton! Tiel sonas mia voĉo, kiam mi laŭtlegas.",
    "et": "Tere! Nii kõlab mu hääl, kui ma valjusti loen.",
    "eu": "Kaixo! Horrela entzuten da nire ahotsa irakurtzean.",
    "fa": "سلام! این صدای من هنگام خواندن است.",
    "fy": "Hallo! Sa klinkt myn stim as ik hurdop foarlês.",
    "ga": "Dia duit! Seo é mo ghuth nuair a léim os ard.",
    "gl": "Ola! Así soa a miña voz cando leo en voz alta.",
    "he": "שלום! כך נשמע הקול שלי כשאני קורא בקול.",
    "hr": "Bok! Ovako zvuči moj glas kad čitam naglas.",
    "hu": "Szia! Így szól a hangom, amikor hangosan olvasok.",
    "hy": "Բարև։ Այսպես է հնչում իմ ձայնը, երբ կարդում եմ։",
    "id": "Halo! Beginilah suaraku saat aku membaca dengan keras.",
    "is": "Halló! Svona hljómar röddin mín þegar ég les upphátt.",
    "ka": "გამარჯობა! ასე ჟღერს ჩემი ხმა, როცა ხმამაღლა ვკითხულობ.",
    "lb": "Moien! Sou kléngt meng Stëmm, wann ech virliesen.",
    "lt": "Labas! Taip skamba mano balsas, kai skaitau garsiai.",
    "lv": "Sveiki! Tā skan mana balss, kad es lasu skaļi.",
    "mk": "Здраво! Вака звучи мојот глас кога читам на глас.",
    "ml": "നമസ്കാരം! ഉറക്കെ വായിക്കുമ്പോൾ എന്റെ ശബ്ദം ഇതാണ്.",
    "nn": "Hei! Slik høyrest stemma mi ut når eg les høgt.",
    "ro": "Salut! Așa sună vocea mea când citesc cu voce tare.",
    "sk": "Ahoj! Takto znie môj hlas, keď čítam nahlas.",
    "sl": "Živjo! Tako zveni moj glas, ko berem na glas.",
    "sq": "Përshëndetje! Ky është zëri im kur lexoj.",
    "sr": "Здраво! Овако звучи мој глас када читам наглас.",
    "ta": "வணக்கம்! நான் படிக்கும்போது என் குரல் இதுதான்.",
    "te": "నమస్కారం! నేను చదివేటప్పుడు నా గొంతు ఇలా వినిపిస్తుంది.",
    "th": "สวัสดี นี่คือเสียงของฉันเวลาอ่านออกเสียง",
    "ur": "سلام! یہ میری پڑھنے کی آواز ہے۔",
    "vi": "Xin chào! Đây là giọng nói của tôi khi đọc to.",
}
FALLBACK_LANGUAGE = "en"


def anchor_text(language: str) -> str:
    """The anchor sentence for an OmniVoice language id (English for one without its own)."""
    return (ANCHOR_TEXTS.get(language) or ANCHOR_TEXTS.get(language.split("-")[0])
            or ANCHOR_TEXTS[FALLBACK_LANGUAGE])
