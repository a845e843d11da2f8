#!/usr/bin/env python3
"""Calibrate a measurement set in place: each pass removes part of the gain error.

calibrate.py MS --cycle N [--factor 0.25] [--log LOG]
"""

from __future__ import annotations

import argparse

from common import load_state, log, save_state


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ms")
    parser.add_argument("--cycle", type=int, default=0)
    parser.add_argument("--factor", type=float, default=0.25)
    parser.add_argument("--log")
    args = parser.parse_args()
    state = load_state(args.ms)
    state["gain_error"] = state["gain_error"] * args.factor
    save_state(args.ms, state)
    log(args.log, f"calibrate cycle={args.cycle} gain_error={state['gain_error']:.6g}")


if __name__ == "__main__":
    main()
