"""Highlight colours that stay readable: WCAG contrast against the theme's text colour.

Highlights are background colours behind text. In the light theme the text is black, in the dark
theme white; every colour returned here has a WCAG 2.x contrast ratio of at least
:data:`MIN_CONTRAST` (4.5, the AA level for normal text) against that text colour, so no
highlight ever makes a sentence hard to read.
"""

from __future__ import annotations

import colorsys
from typing import Literal

Theme = Literal["light", "dark"]

#: WCAG AA contrast for normal-size text.
MIN_CONTRAST = 4.5

#: Text colour drawn over highlights, per theme.
TEXT_COLOUR: dict[str, str] = {"light": "#000000", "dark": "#ffffff"}

# Hues are spread with the golden angle so that the first few colours (the groups a reader sees
# most) are far apart on the colour wheel, and any n gives distinct hues.
_GOLDEN_ANGLE = 137.50776405 / 360.0
# Lightness and saturation per theme: pastel backgrounds for black text, deep ones for white.
_LIGHTNESS = {"light": 0.77, "dark": 0.30}
_SATURATION = {"light": 0.80, "dark": 0.60}


def relative_luminance(colour: str) -> float:
    """WCAG relative luminance (0 = black, 1 = white) of a ``#rrggbb`` colour."""
    red, green, blue = parse_hex(colour)

    def channel(value: int) -> float:
        c = value / 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio (1 to 21) between two ``#rrggbb`` colours."""
    a, b = relative_luminance(first), relative_luminance(second)
    light, dark = max(a, b), min(a, b)
    return (light + 0.05) / (dark + 0.05)


def group_colours(n: int, theme: Theme = "light") -> list[str]:
    """``n`` distinct ``#rrggbb`` highlight colours, readable under the theme's text colour.

    Deterministic: the same ``n`` and theme always give the same list, and the first ``k``
    colours of ``group_colours(n)`` are ``group_colours(k)`` (so colours do not move when
    more groups appear).
    """
    if theme not in _LIGHTNESS:
        raise ValueError(f"unknown theme {theme!r}; use 'light' or 'dark'")
    if n < 0:
        raise ValueError(f"number of colours must be >= 0, got {n}")
    text = TEXT_COLOUR[theme]
    colours = []
    for index in range(n):
        hue = (0.08 + index * _GOLDEN_ANGLE) % 1.0
        colours.append(readable_colour(hue, _LIGHTNESS[theme], _SATURATION[theme], text, theme))
    return colours


def readable_colour(hue: float, lightness: float, saturation: float, text: str, theme: str) -> str:
    """The ``#rrggbb`` colour of this hue (HLS, 0..1) nearest to ``lightness`` whose contrast
    with ``text`` meets the target (used for similarity groups and span-label marks)."""
    # Some hues (yellow, cyan) are much brighter than others at equal HLS lightness: step the
    # lightness towards safety until the contrast holds. A small margin absorbs hex rounding.
    step = 0.02 if theme == "light" else -0.02
    for _ in range(60):
        colour = _hex(colorsys.hls_to_rgb(hue, lightness, saturation))
        if contrast_ratio(colour, text) >= MIN_CONTRAST + 0.2:
            return colour
        lightness = min(1.0, max(0.0, lightness + step))
    return "#ffffff" if theme == "light" else "#000000"  # pragma: no cover - unreachable


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def parse_hex(colour: str) -> tuple[int, int, int]:
    """``#rrggbb`` as 0..255 integers; ValueError naming the colour otherwise."""
    text = colour.strip()
    if len(text) != 7 or text[0] != "#":
        raise ValueError(f"colour must be #rrggbb, got {colour!r}")
    try:
        return int(text[1:3], 16), int(text[3:5], 16), int(text[5:7], 16)
    except ValueError:
        raise ValueError(f"colour must be #rrggbb, got {colour!r}") from None
