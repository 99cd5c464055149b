"""The design controls of the studio: the engine's instruct vocabulary as choices, the
languages the server advertises (with the regional variants a voice can read: ``pt-BR``),
and a sample sentence per language.

The controls offer only what upstream accepts: at most one item per category (gender, age,
pitch, style, accent, dialect), an English accent only for English speech and a Chinese
dialect only for Chinese speech (never both). :func:`instruct_from_design` checks a
submitted design with the engine's own :func:`normalize_instruct`.
"""

from __future__ import annotations

from typing import Any

from wyoming_omnivoice.engine import instruct_vocabulary, language_info, normalize_instruct
from wyoming_omnivoice.voices import (
    VoiceCatalog,
    anchor_text,
    tags_for,
    variant_tags,
    variants_of,
    written_tag,
)

LABELS = {"gender": "Gender", "age": "Age", "pitch": "Pitch", "style": "Style",
          "accent": "English accent", "dialect": "Chinese dialect"}
#: The category only makes sense for speech in these languages.
LANGUAGE_OF = {"accent": "en", "dialect": "zh"}
DIALECT_NAMES = {
    "河南话": "Henan", "陕西话": "Shaanxi", "四川话": "Sichuan", "贵州话": "Guizhou",
    "云南话": "Yunnan", "桂林话": "Guilin", "济南话": "Jinan", "石家庄话": "Shijiazhuang",
    "甘肃话": "Gansu", "宁夏话": "Ningxia", "青岛话": "Qingdao", "东北话": "Northeastern",
}

#: A typical Home Assistant reply per language, prefilled as the sample sentence.
SAMPLES = {
    "en": "The living room lights are on and it is 21 degrees inside.",
    "de": "Das Licht im Wohnzimmer ist an, und drinnen sind es 21 Grad.",
    "fr": "Les lumières du salon sont allumées et il fait 21 degrés à l'intérieur.",
    "es": "Las luces del salón están encendidas y dentro hace 21 grados.",
    "it": "Le luci del soggiorno sono accese e dentro ci sono 21 gradi.",
    "nl": "De lampen in de woonkamer zijn aan en het is binnen 21 graden.",
    "pt": "As luzes da sala estão acesas e estão 21 graus lá dentro.",
    "pt-BR": "As luzes da sala estão acesas e está fazendo 21 graus lá dentro.",
    "pl": "Światła w salonie są włączone, a w środku jest 21 stopni.",
    "sv": "Lamporna i vardagsrummet är tända och det är 21 grader inne.",
    "da": "Lyset i stuen er tændt, og der er 21 grader indenfor.",
    "nb": "Lysene i stua er på, og det er 21 grader inne.",
    "fi": "Olohuoneen valot ovat päällä ja sisällä on 21 astetta.",
    "cs": "Světla v obývacím pokoji jsou zapnutá a uvnitř je 21 stupňů.",
    "ru": "Свет в гостиной включён, в доме 21 градус.",
    "uk": "Світло у вітальні увімкнене, у домі 21 градус.",
    "tr": "Oturma odasının ışıkları açık ve içerisi 21 derece.",
    "zh": "客厅的灯已经打开，室内温度是二十一度。",
    "yue": "客廳嘅燈已經開咗，屋企入面有二十一度。",
    "ja": "リビングの照明をつけました。室温は21度です。",
    "ko": "거실 조명이 켜져 있고 실내 온도는 21도입니다.",
}


#: The region a regional variant's tag names, for its row in the language list.
REGIONS = {"BR": "Brazil", "PT": "Portugal"}


def sample_text(language: str, tag: str | None = None) -> str:
    return SAMPLES.get(tag or language) or SAMPLES.get(language) or anchor_text(language)


def vocabulary() -> dict[str, Any]:
    categories = []
    for name, english, chinese in instruct_vocabulary():
        items = chinese if name == "dialect" else english
        options = [{"value": item,
                    "label": f"{DIALECT_NAMES.get(item, item)} ({item})" if name == "dialect"
                    else item.replace(" accent", "").capitalize()}
                   for item in items]
        categories.append({"name": name, "label": LABELS.get(name, name.capitalize()),
                           "language": LANGUAGE_OF.get(name), "options": options})
    return {"categories": categories, "exclusive": [["accent", "dialect"]]}


def languages(catalog: VoiceCatalog) -> list[dict[str, Any]]:
    """Every language a voice of the catalogue speaks, English first, then by name; a
    language with regional variants also once per variant's tag (``pt-BR``: a voice that
    reads the Brazilian way and is offered to Brazilian pipelines, ``pt-PT``)."""
    ids: list[str] = []
    for preset in catalog:
        ids.extend(language for language in preset.languages if language not in ids)
    rows = []
    for language in ids:
        info = language_info(language)
        name = info.name if info is not None else language
        rows.append({"id": language, "name": name, "tags": list(tags_for(language) or ()),
                     "sample": sample_text(language)})
        for variant in variants_of(language):
            tag = written_tag(language, variant)
            if tag != language:
                region = REGIONS.get(tag.rpartition("-")[2], tag)
                rows.append({"id": tag, "name": f"{name} ({region})",
                             "tags": list(variant_tags(language, variant) or ()),
                             "sample": sample_text(language, tag)})
    rows.sort(key=lambda row: (row["id"] != "en", row["name"]))
    return rows


def instruct_from_design(design: Any, language: str) -> str | None:
    """The instruct of a design ``{category: item}``; ValueError naming what is wrong."""
    if not isinstance(design, dict):
        raise ValueError("'design' must be an object such as {\"gender\": \"female\"}")
    allowed = {name: set(english) | set(chinese)
               for name, english, chinese in instruct_vocabulary()}
    unknown = sorted(set(map(str, design)) - set(allowed))
    if unknown:
        raise ValueError(f"Unknown design control(s) {', '.join(unknown)}; use "
                         f"{', '.join(allowed)}")
    items: list[str] = []
    for name in allowed:
        value = design.get(name)
        if value in (None, ""):
            continue
        if not isinstance(value, str) or value not in allowed[name]:
            raise ValueError(f"{LABELS.get(name, name)}: {value!r} is not one of the choices")
        wanted = LANGUAGE_OF.get(name)
        if wanted is not None and language != wanted:
            raise ValueError(f"{LABELS[name]} is only for {wanted!r} speech; pick that "
                             "language or clear the choice")
        items.append(value)
    if not items:
        return None
    instruct = ", ".join(items)
    normalize_instruct(instruct)  # the engine's rules (one per category, no accent+dialect)
    return instruct
