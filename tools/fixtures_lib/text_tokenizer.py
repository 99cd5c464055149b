"""A tiny byte-level BPE tokenizer shaped like Qwen3's, with OmniVoice's special tokens.

Same pipeline kinds as the published ``tokenizer.json`` (NFC normaliser, regex split plus
byte-level pre-tokenizer, byte-level decoder, no BOS/EOS), trained on a small multilingual
corpus written here, so CJK, Latin, Cyrillic and the instruct vocabulary all tokenize into
a few thousand ids. The seven special tokens are added last, in upstream's order, so their
ids are the top of the vocabulary just like 151669..151675 in the real one.
"""

from __future__ import annotations

import random

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

#: Upstream's ``additional_special_tokens`` order (builder.build_model_and_tokenizer).
SPECIAL_TOKENS = (
    "<|denoise|>",
    "<|lang_start|>",
    "<|lang_end|>",
    "<|instruct_start|>",
    "<|instruct_end|>",
    "<|text_start|>",
    "<|text_end|>",
)

# The split pattern Qwen2/Qwen3 tokenizers use before byte-level mapping.
_SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

_SENTENCES = (
    "Hello world. This is a small test of the speech synthesis system.",
    "The quick brown fox jumps over the lazy dog near the river bank.",
    "Good morning! The kitchen lights are on and the front door is locked.",
    "It is twenty three degrees outside, with light rain expected this evening.",
    "Nice to meet you. How are you today? I am fine, thank you.",
    "Please turn off the living room lamp and set the alarm for seven o'clock.",
    "The weather is sunny, the temperature is mild and the wind is calm.",
    "She said that she would come back tomorrow, but nobody believed her.",
    "Numbers like 1, 2, 3, 42 and 2026 appear in dates, times and prices.",
    "Guten Morgen! Wie geht es Ihnen heute? Das Wetter ist schön.",
    "Bonjour tout le monde, je suis très content de vous voir aujourd'hui.",
    "Hola, ¿cómo estás? Mañana vamos a la playa con nuestros amigos.",
    "Buongiorno, questa è una prova del sistema di sintesi vocale.",
    "Olá, tudo bem? Hoje o dia está muito bonito em Lisboa.",
    "Привет, как дела? Сегодня хорошая погода и светит солнце.",
    "Dzień dobry, dziękuję bardzo za pomoc w tej sprawie.",
    "Hallo, dit is een korte zin in het Nederlands voor de test.",
    "你好，世界！这是一个测试。今天天气很好，我们去公园散步吧。",
    "我们明天早上八点出发，请大家准时到达火车站。",
    "这个语音合成系统可以说很多种语言，包括中文、英语和日语。",
    "请把客厅的灯关掉，然后把空调温度调到二十六度。",
    "他笑着说：没关系，下次再来。大家都很高兴。",
    "こんにちは、元気ですか？今日はとても良い天気ですね。",
    "ありがとうございます。また明日会いましょう。",
    "안녕하세요, 만나서 반갑습니다. 오늘 날씨가 좋네요.",
    "مرحبا، كيف حالك اليوم؟ الطقس جميل جدا.",
    "नमस्ते, आप कैसे हैं? आज मौसम बहुत अच्छा है।",
    "สวัสดีครับ วันนี้อากาศดีมาก",
    "Merhaba, bugün hava çok güzel. Nasılsın?",
    "Γεια σου, τι κάνεις σήμερα; Ο καιρός είναι ωραίος.",
    "[laughter] That was really funny! [sigh] Well, back to work.",
    "Is that right? [question-en] Oh really? [surprise-oh] Wow. [confirmation-en]",
)

_INSTRUCT_WORDS = (
    "male", "female", "child", "teenager", "young adult", "middle-aged", "elderly",
    "very low pitch", "low pitch", "moderate pitch", "high pitch", "very high pitch",
    "whisper", "american accent", "british accent", "australian accent", "chinese accent",
    "canadian accent", "indian accent", "korean accent", "portuguese accent",
    "russian accent", "japanese accent",
    "男", "女", "儿童", "少年", "青年", "中年", "老年", "极低音调", "低音调", "中音调",
    "高音调", "极高音调", "耳语", "河南话", "陕西话", "四川话", "贵州话", "云南话", "桂林话",
    "济南话", "石家庄话", "甘肃话", "宁夏话", "青岛话", "东北话",
)

_LANGUAGE_WORDS = (
    "None", "en", "zh", "de", "fr", "es", "it", "pt", "ru", "ja", "ko", "ar", "hi", "nl",
    "pl", "tr", "yue", "nan", "English", "Chinese", "German", "French", "Spanish",
    "Italian", "Portuguese", "Russian", "Japanese", "Korean", "Arabic", "Hindi", "Dutch",
    "Polish", "Turkish", "Cantonese", "Greek", "Thai",
)


def build_corpus(seed: int) -> list[str]:
    """Return the training lines: fixed sentences plus seeded recombinations."""
    rng = random.Random(seed)
    lines = list(_SENTENCES)
    lines += [", ".join(rng.sample(_INSTRUCT_WORDS, 3)) for _ in range(200)]
    lines += ["，".join(rng.sample(_INSTRUCT_WORDS[23:], 3)) for _ in range(100)]
    lines += [" ".join(rng.sample(_LANGUAGE_WORDS, 6)) for _ in range(100)]
    words = " ".join(_SENTENCES).split()
    for _ in range(1500):
        lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(4, 14))))
    cjk = "".join(s for s in _SENTENCES if any("\u4e00" <= ch <= "\u9fff" for ch in s))
    for _ in range(400):
        start = rng.randrange(len(cjk) - 8)
        lines.append(cjk[start : start + rng.randint(4, 16)])
    lines += [str(rng.randint(0, 100000)) for _ in range(200)]
    return lines


def train_tokenizer(vocab_size: int = 4000, seed: int = 1234) -> Tokenizer:
    """Train the byte-level BPE and append the OmniVoice special tokens."""
    tokenizer = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_SPLIT_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    tokenizer.train_from_iterator(build_corpus(seed), trainer=trainer)
    tokenizer.add_special_tokens(list(SPECIAL_TOKENS))
    return tokenizer


def wrap_for_upstream(tokenizer: Tokenizer):  # -> transformers.PreTrainedTokenizerFast
    """Wrap the tokenizer the way upstream's ``AutoTokenizer`` result behaves."""
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        additional_special_tokens=list(SPECIAL_TOKENS),
    )
