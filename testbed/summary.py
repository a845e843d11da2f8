"""Maintain the testbed summary that tests read: /var/cache/shinobi-testbed/engines.json.

    summary.py set ENGINE KEY=VALUE...   record facts about an engine that is up
    summary.py drop ENGINE...            forget engines that down.sh stopped
    summary.py get ENGINE[.KEY...]       print one value (JSON for objects)
    summary.py engines                   print the names of the engines that are up

Dotted keys nest ("images.busybox=shinobi-test/busybox:latest"); integers and
true/false become JSON numbers and booleans. Writers hold an flock, so
engines brought up in parallel do not lose each other's entries.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("TESTBED_CACHE", "/var/cache/shinobi-testbed"))
SUMMARY = CACHE / "engines.json"


def _typed(value: str) -> Any:
    if value in ("true", "false"):
        return value == "true"
    if value.isdigit():
        return int(value)
    return value


def _load() -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(SUMMARY.read_text())
    except (FileNotFoundError, ValueError):
        data = {}
    data.setdefault("engines", {})
    return data


def _save(data: dict[str, Any]) -> None:
    tmp = SUMMARY.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, SUMMARY)


def _locked_update(change: Any) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".engines.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = _load()
        change(data)
        _save(data)


def cmd_set(engine: str, pairs: list[str]) -> None:
    entry: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            sys.exit(f"summary.py: expected KEY=VALUE, got {pair!r}")
        node = entry
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _typed(value)

    def change(data: dict[str, Any]) -> None:
        if engine == "testbed":
            data.update(entry)
            return
        # Keep the first time an engine was seen up while its facts stay the
        # same, so a run that changes nothing leaves the file as it was.
        old = dict(data["engines"].get(engine, {}))
        since = old.pop("up_since", None)
        entry["up_since"] = (
            since if old == entry and since else time.strftime("%Y-%m-%dT%H:%M:%S%z")
        )
        data["engines"][engine] = entry

    _locked_update(change)


def cmd_drop(engines: list[str]) -> None:
    def change(data: dict[str, Any]) -> None:
        for engine in engines:
            data["engines"].pop(engine, None)

    _locked_update(change)


def cmd_get(path: str) -> None:
    node: Any = _load()["engines"]
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            sys.exit(f"summary.py: {path} is not in {SUMMARY}")
        node = node[part]
    print(node if isinstance(node, str | int) else json.dumps(node))


def main(argv: list[str]) -> None:
    if len(argv) >= 2 and argv[0] == "set":
        cmd_set(argv[1], argv[2:])
    elif argv and argv[0] == "drop":
        cmd_drop(argv[1:])
    elif len(argv) == 2 and argv[0] == "get":
        cmd_get(argv[1])
    elif argv == ["engines"]:
        print(",".join(sorted(_load()["engines"])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
