"""The smallest honest FITS reader and writer: a 2-D image, one header, nothing else.

Shared by the example tools so that what they pass between them are real
FITS files any viewer opens (ds9, astropy), not stand-ins.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

__all__ = ["read_image", "write_image"]

BLOCK = 2880
CARD = 80


def _card(key: str, value: object) -> str:
    if isinstance(value, bool):
        text = "T" if value else "F"
    elif isinstance(value, int | float):
        text = repr(value) if isinstance(value, float) else str(value)
    else:
        text = "'" + str(value).replace("'", "''") + "'"
    return f"{key:<8}= {text:>20}".ljust(CARD)[:CARD]


def _pad(data: bytes, fill: bytes) -> bytes:
    return data + fill * (-len(data) % BLOCK)


def write_image(
    path: str, pixels: Sequence[float], size: int, cards: Mapping[str, object], bitpix: int = -32
) -> None:
    """Write a size x size image (row-major ``pixels``) with extra header ``cards``."""
    header = [
        _card("SIMPLE", True),
        _card("BITPIX", bitpix),
        _card("NAXIS", 2),
        _card("NAXIS1", size),
        _card("NAXIS2", size),
        *(_card(k.upper()[:8], v) for k, v in cards.items()),
        "END".ljust(CARD),
    ]
    if bitpix == -32:
        data = struct.pack(f">{len(pixels)}f", *pixels)
    else:
        data = bytes(int(p) & 0xFF for p in pixels)
    with open(path, "wb") as fh:
        fh.write(_pad("".join(header).encode("ascii"), b" "))
        fh.write(_pad(data, b"\0"))


def read_image(path: str) -> tuple[dict[str, object], list[float]]:
    """(header, pixels) of an image written by :func:`write_image`."""
    with open(path, "rb") as fh:
        raw = fh.read()
    header: dict[str, object] = {}
    offset = 0
    while True:
        card = raw[offset : offset + CARD].decode("ascii")
        offset += CARD
        key = card[:8].strip()
        if key == "END":
            break
        if card[8:10] != "= ":
            continue
        text = card[10:].strip()
        if text.startswith("'"):
            header[key] = text[1:-1].replace("''", "'").rstrip()
        elif text in ("T", "F"):
            header[key] = text == "T"
        else:
            header[key] = float(text) if any(c in text for c in ".eE") else int(text)
    offset += -offset % BLOCK
    count = int(header["NAXIS1"]) * int(header["NAXIS2"])  # type: ignore[call-overload]
    if header["BITPIX"] == -32:
        pixels = list(struct.unpack(f">{count}f", raw[offset : offset + 4 * count]))
    else:
        pixels = [float(b) for b in raw[offset : offset + count]]
    return header, pixels
