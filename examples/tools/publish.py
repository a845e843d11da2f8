#!/usr/bin/env python3
"""Publish the final image: copy it to where the pipeline's product belongs.

publish.py IMAGE --to FINAL [--log LOG]
"""

from __future__ import annotations

import argparse
import shutil

from common import log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--to", required=True)
    parser.add_argument("--log")
    args = parser.parse_args()
    shutil.copyfile(args.image, args.to)
    log(args.log, f"publish {args.image} -> {args.to}")


if __name__ == "__main__":
    main()
