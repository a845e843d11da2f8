#!/usr/bin/env python3
"""Make a clean mask from a restored image, breizorro style: IMAGE -> IMAGE.mask.fits.

    mask.py --restored-image IMAGE [--sigma 5] [--log LOG]

Pixels brighter than sigma times the image's noise (the NOISE header card,
else the pixels' own spread) are 1, the rest 0.
"""

from __future__ import annotations

import argparse
import statistics

from common import log
from fits import read_image, write_image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restored-image", required=True)
    parser.add_argument("--sigma", type=float, default=5.0)
    parser.add_argument("--log")
    args = parser.parse_args()
    header, pixels = read_image(args.restored_image)
    noise = float(header.get("NOISE") or statistics.pstdev(pixels))  # type: ignore[arg-type]
    mask = [1.0 if p > args.sigma * noise else 0.0 for p in pixels]
    out = f"{args.restored_image}.mask.fits"
    write_image(out, mask, int(header["NAXIS1"]), {"SIGMA": args.sigma}, bitpix=8)  # type: ignore[call-overload]
    log(args.log, f"mask {int(sum(mask))} pixels -> {out}")


if __name__ == "__main__":
    main()
