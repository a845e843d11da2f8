#!/usr/bin/env python3
"""Gather images into one summary: each image's noise and when it was made.

    mosaic.py --out MOSAIC.json IMAGE...

The TSTART/TEND header cards the imager wrote show which images were made
at the same time: "overlapped" is true when all of them were running at one
moment.
"""

from __future__ import annotations

import argparse
import json

from fits import read_image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("images", nargs="+")
    args = parser.parse_args()
    made = []
    for path in args.images:
        header, _ = read_image(path)
        made.append(
            {
                "image": path,
                "noise": header["NOISE"],
                "started": header["TSTART"],
                "finished": header["TEND"],
            }
        )
    latest_start = max(m["started"] for m in made)
    earliest_end = min(m["finished"] for m in made)
    summary = {"images": made, "overlapped": latest_start < earliest_end}
    with open(args.out, "w") as fh:
        json.dump(summary, fh, indent=2)


if __name__ == "__main__":
    main()
