#!/usr/bin/env python3
"""Image a measurement set into a FITS file, wsclean style: -name PREFIX writes PREFIX-image.fits.

    image.py -name PREFIX [--cycle N] [--seconds S] [--log LOG] MS

The image is a point source over noise whose level follows the residual
gain error. The header records NOISE, and TSTART/TEND: when this process
started and finished imaging (``--seconds`` stands in for real work).
"""

from __future__ import annotations

import argparse
import math
import random
import time

from common import load_state, log
from fits import write_image

SIZE = 32


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ms")
    parser.add_argument("-name", dest="prefix", required=True)
    parser.add_argument("--cycle", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=0.0)
    parser.add_argument("--log")
    args = parser.parse_args()
    started = time.time()
    state = load_state(args.ms)
    noise = 1.0 + 100.0 * state["gain_error"]
    rng = random.Random(args.prefix)
    pixels = []
    for y in range(SIZE):
        for x in range(SIZE):
            source = 1000.0 * math.exp(-((x - SIZE / 2) ** 2 + (y - SIZE / 2) ** 2) / 4.0)
            pixels.append(source + rng.gauss(0.0, noise))
    time.sleep(args.seconds)
    out = f"{args.prefix}-image.fits"
    cards = {"NOISE": round(noise, 6), "CYCLE": args.cycle, "TSTART": started, "TEND": time.time()}
    write_image(out, pixels, SIZE, cards)
    log(args.log, f"image cycle={args.cycle} noise={noise:.6g} -> {out}")


if __name__ == "__main__":
    main()
