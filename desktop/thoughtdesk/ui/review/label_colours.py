"""Label colours adjusted per theme, so span marks stay readable (pure Python, no Qt).

A label set stores one mid-tone colour per label. Span marks draw that colour behind text:
black text on the light theme, white text on the dark one. :func:`mark_colours` keeps the hue
and moves the lightness until the WCAG contrast with the text is at least 4.5 (AA).
"""

from __future__ import annotations

import colorsys
from functools import lru_cache

from thoughtdesk.core.review.compare.colours import TEXT_COLOUR, parse_hex, readable_colour

_TARGET_LIGHTNESS = {"light": 0.80, "dark": 0.28}


@lru_cache(maxsize=256)
def mark_colours(colour: str, theme: str = "light") -> tuple[str, str]:
    """``(background, text)`` ``#rrggbb`` colours for a span mark of a label of ``colour``.

    An invalid colour falls back to grey (a label set is user data: never fail drawing on it).
    """
    text = TEXT_COLOUR.get(theme, TEXT_COLOUR["light"])
    try:
        red, green, blue = (c / 255.0 for c in parse_hex(colour))
    except (ValueError, TypeError, AttributeError):
        red = green = blue = 0.6
    hue, _lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    lightness = _TARGET_LIGHTNESS.get(theme, 0.80)
    return readable_colour(hue, lightness, min(saturation, 0.85), text, "dark" if theme == "dark" else "light"), text
