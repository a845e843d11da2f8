#!/usr/bin/env python3
"""Decide whether self-calibration has converged: is the image noise below the threshold?

    assess.py IMAGE --prefix PREFIX --threshold T [--cycle N] [--log LOG]

Converged means PREFIX.converged exists: the file is written when the noise
is at or below T and removed otherwise, so its existence is the whole answer
(a loop's `until` test, also between two cluster jobs).
"""

from __future__ import annotations

import argparse
import os

from common import log
from fits import read_image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--threshold", type=float, required=True)
    parser.add_argument("--cycle", type=int, default=0)
    parser.add_argument("--log")
    args = parser.parse_args()
    header, _ = read_image(args.image)
    noise = float(header["NOISE"])  # type: ignore[arg-type]
    flag = f"{args.prefix}.converged"
    converged = noise <= args.threshold
    if converged:
        with open(flag, "w") as fh:
            fh.write(f"noise {noise} <= {args.threshold} at cycle {args.cycle}\n")
    elif os.path.exists(flag):
        os.unlink(flag)
    log(
        args.log,
        f"assess cycle={args.cycle} noise={noise:.6g} converged={'yes' if converged else 'no'}",
    )


if __name__ == "__main__":
    main()
