"""Numbers read out in words for ChatTTS's normalizer, which drops digits and symbols it cannot say:
decimals, percentages, times, dates, currency, units and ordinals in Chinese and English, the rest
left to cn2an or num2words.
"""

import re
from collections.abc import Callable

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SIGN = r"(?<![A-Za-z0-9.])[-−]"  # a minus sign, not a hyphen between words or numbers
_CURRENCY_EN = {"$": ("dollar", "cent"), "€": ("euro", "cent"), "£": ("pound", "penny")}
_CURRENCY_ZH = {"$": "美元", "＄": "美元", "€": "欧元", "£": "英镑", "¥": "元", "￥": "元"}
# unit -> (English singular, English plural, Chinese); longest first in the pattern below.
_UNITS = {
    "km/h": ("kilometer per hour", "kilometers per hour", "公里每小时"),
    "°C": ("degree Celsius", "degrees Celsius", "摄氏度"),
    "℃": ("degree Celsius", "degrees Celsius", "摄氏度"),
    "°F": ("degree Fahrenheit", "degrees Fahrenheit", "华氏度"),
    "℉": ("degree Fahrenheit", "degrees Fahrenheit", "华氏度"),
    "mph": ("mile per hour", "miles per hour", "英里每小时"),
    "km": ("kilometer", "kilometers", "公里"),
    "kg": ("kilogram", "kilograms", "公斤"),
    "cm": ("centimeter", "centimeters", "厘米"),
    "mm": ("millimeter", "millimeters", "毫米"),
    "mg": ("milligram", "milligrams", "毫克"),
    "ml": ("milliliter", "milliliters", "毫升"),
    "GB": ("gigabyte", "gigabytes", "GB"),
    "MB": ("megabyte", "megabytes", "MB"),
    "%": ("percent", "percent", "%"),
    "m": ("meter", "meters", "米"),
    "g": ("gram", "grams", "克"),
    "L": ("liter", "liters", "升"),
}
_UNIT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
# A number with its sign and unit; a unit made of letters must not run into a word ("5 miles").
_QUANTITY = re.compile(
    rf"(?P<sign>{_SIGN})?(?P<num>{_NUMBER})(?:\s?(?P<unit>{_UNIT})(?![A-Za-z]))?"
)
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})-(0?[1-9]|1[0-2])-(0?[1-9]|[12]\d|3[01])(?!\d)")
_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_ORDINAL = re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)\b")
_YEAR_AFTER = re.compile(r"(?:\b(?:in|since|by|until|from|of|year|around)\s+)$", re.IGNORECASE)


def _words(value: float | int, to: str = "cardinal") -> str:
    """num2words without its hyphens and commas: ChatTTS reads '-' and ',' as pauses."""
    from num2words import num2words

    return str(num2words(value, to=to)).replace("-", " ").replace(",", "")


def _value(raw: str) -> float | int:
    raw = raw.replace(",", "")
    return float(raw) if "." in raw else int(raw)


def _en_decimal(raw: str) -> str:
    """'12.05' -> 'twelve point zero five' (digits after the point one by one, as said)."""
    raw = raw.replace(",", "")
    whole, _, frac = raw.partition(".")
    out = _words(int(whole))
    if frac:
        out += " point " + " ".join(_words(int(d)) for d in frac)
    return out


def _en_money(symbol: str, raw: str) -> str:
    unit, cent = _CURRENCY_EN[symbol]
    whole, _, frac = raw.replace(",", "").partition(".")
    dollars, cents = int(whole), int((frac + "00")[:2]) if frac else 0
    parts = (
        [f"{_words(dollars)} {unit}{'' if dollars == 1 else 's'}"] if dollars or not cents else []
    )
    if cents:
        plural = "pence" if cent == "penny" else "cents"
        parts.append(f"{_words(cents)} {cent if cents == 1 else plural}")
    return " and ".join(parts)


def english_numbers(text: str) -> str:
    """Numbers in English text, read in words."""

    def date(m: re.Match[str]) -> str:
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
        return f" {_MONTHS[month - 1]} {_words(day, 'ordinal')}, {_words(year, 'year')} "

    def time(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), int(m.group(2))
        if minute == 0:
            return f" {_words(hour)} o'clock "
        tail = f"oh {_words(minute)}" if minute < 10 else _words(minute)
        return f" {_words(hour)} {tail} "

    def money(m: re.Match[str]) -> str:
        sign = "minus " if m.group(1) else ""
        return f" {sign}{_en_money(m.group(2), m.group(3))} "

    def quantity(m: re.Match[str]) -> str:
        raw, unit = m.group("num"), m.group("unit")
        before = m.string[: m.start()]
        if (
            not unit
            and not m.group("sign")
            and re.fullmatch(r"1[1-9]\d\d|20\d\d", raw)
            and _YEAR_AFTER.search(before)
        ):
            return _words(int(raw), "year")
        spoken = _en_decimal(raw) if "." in raw else _words(_value(raw))
        if m.group("sign"):
            spoken = "minus " + spoken
        if unit:
            singular, plural, _zh = _UNITS[unit]
            spoken += " " + (singular if _value(raw) == 1 and not m.group("sign") else plural)
        return f" {spoken} "

    text = _ISO_DATE.sub(date, text)
    text = _TIME.sub(time, text)
    text = re.sub(rf"({_SIGN})?([$€£])\s?({_NUMBER})", money, text)
    text = _ORDINAL.sub(lambda m: f" {_words(int(m.group(1)), 'ordinal')} ", text)
    text = _QUANTITY.sub(quantity, text)
    return re.sub(r" {2,}", " ", text)


def _zh(raw: str) -> str:
    import cn2an

    return str(cn2an.an2cn(raw.replace(",", "")))


def chinese_numbers(text: str) -> str:
    """Numbers in Chinese text, read in Chinese (cn2an for what is left)."""
    import cn2an

    def time(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), int(m.group(2))
        if minute == 0:
            return f"{_zh(str(hour))}点"
        return f"{_zh(str(hour))}点{'零' if minute < 10 else ''}{_zh(str(minute))}分"

    def money(m: re.Match[str]) -> str:
        raw = m.group(3).replace(",", "")
        if "." in raw:
            raw = raw.rstrip("0").rstrip(".")
        return f"{'负' if m.group(1) else ''}{_zh(raw)}{_CURRENCY_ZH[m.group(2)]}"

    def quantity(m: re.Match[str]) -> str:
        raw, unit, sign = m.group("num").replace(",", ""), m.group("unit"), m.group("sign")
        if unit == "%":
            return f"{'负' if sign else ''}百分之{_zh(raw)}"
        if not unit:
            if len(raw) >= 11 or (len(raw) > 1 and raw.startswith("0") and "." not in raw):
                # phone numbers, codes: digit by digit, as they are said
                return "".join(_zh(d) for d in raw)
            return f"{'负' if sign else ''}{_zh(raw)}" if sign or "," in m.group("num") else raw
        chinese = _UNITS[unit][2]
        if sign and chinese in ("摄氏度", "华氏度"):
            return f"零下{_zh(raw)}{chinese}"
        return f"{'负' if sign else ''}{_zh(raw)}{chinese}"

    text = _TIME.sub(time, text)
    text = re.sub(rf"({_SIGN})?([$＄€£¥￥])\s?({_NUMBER})", money, text)
    text = _QUANTITY.sub(quantity, text)
    try:
        # cn2an reads what is left: dates (2024年5月1日), decimals, fractions, plain numbers.
        return str(cn2an.transform(text, "an2cn"))
    except Exception:  # cn2an rejects some shapes (e.g. 1.2.3); keep the digits then
        return text


# ChatTTS calls these on the text between control tokens, per detected language.
NUMBER_READERS: dict[str, Callable[[str], str]] = {"en": english_numbers, "zh": chinese_numbers}
