#!/usr/bin/env python3
"""Make a fresh "measurement set": a directory whose state starts uncalibrated.

    observe.py MS [--gain-error 1.0] [--log LOG]

A new observation starts a new story, so the log is started afresh too.
"""

from __future__ import annotations

import argparse
import os
import shutil

from common import log, save_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ms")
    parser.add_argument("--gain-error", type=float, default=1.0)
    parser.add_argument("--log")
    args = parser.parse_args()
    if os.path.isdir(args.ms):
        shutil.rmtree(args.ms)
    os.makedirs(args.ms)
    save_state(args.ms, {"gain_error": args.gain_error})
    if args.log and os.path.exists(args.log):
        os.unlink(args.log)
    log(args.log, f"observe {os.path.basename(args.ms)}")


if __name__ == "__main__":
    main()
