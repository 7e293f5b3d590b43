"""Label colours adjusted per theme, so span marks stay readable (pure Python, no Qt).

A label set stores one mid-tone colour per label. Span marks draw that colour behind text:
black text on the light theme, white text on the dark one. :func:`mark_colours` keeps the hue
and moves the lightness until the WCAG contrast with the text is at least 4.5 (AA).
"""

from __future__ import annotations

import colorsys
from functools import lru_cache

from thoughtdesk.core.colours import MIN_CONTRAST, TEXT_COLOUR, contrast_ratio

_TARGET_LIGHTNESS = {"light": 0.80, "dark": 0.28}


@lru_cache(maxsize=256)
def mark_colours(colour: str, theme: str = "light") -> tuple[str, str]:
    """``(background, text)`` ``#rrggbb`` colours for a span mark of a label of ``colour``.

    An invalid colour falls back to grey (a label set is user data: never fail drawing on it).
    """
    text = TEXT_COLOUR.get(theme, TEXT_COLOUR["light"])
    try:
        red, green, blue = (int(colour[i : i + 2], 16) / 255.0 for i in (1, 3, 5))
        if len(colour) != 7 or colour[0] != "#":
            raise ValueError(colour)
    except (ValueError, TypeError, IndexError):
        red = green = blue = 0.6
    hue, _lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    lightness = _TARGET_LIGHTNESS.get(theme, 0.80)
    step = 0.02 if theme != "dark" else -0.02
    for _ in range(60):
        candidate = _hex(colorsys.hls_to_rgb(hue, lightness, min(saturation, 0.85)))
        if contrast_ratio(candidate, text) >= MIN_CONTRAST + 0.2:
            return candidate, text
        lightness = min(1.0, max(0.0, lightness + step))
    return ("#ffffff" if theme != "dark" else "#000000"), text


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)
