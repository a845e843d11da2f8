"""A locale whose encoding is not UTF-8 (Latin-1, on old clusters).

Anything ninja printed to stdout that the encoding has no bytes for (a dry
run's boxes, a step named ``ﬁ``) ended the command as an internal error, and
a step argument the locale cannot pass was blamed on the backend as its bug.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import _ninja

from shinobi.backends import process

DEMO = Path(__file__).resolve().parents[2] / "examples" / "offload_demo.py"


def test_a_dry_run_on_a_latin1_stdout_draws_its_boxes_in_ascii(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "latin-1", "SHINOBI_CONFIG": os.devnull}
    done = subprocess.run(
        [*_ninja(), "run", f"{DEMO}:pipe", "--dryrun"], cwd=tmp_path, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode("latin-1")
    assert "+- make ---" in shown and "-- row 1" in shown
    assert "cab \xb7 native" in shown  # what Latin-1 can say, it says


def test_an_argument_the_locale_cannot_pass_is_refused_as_such(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(os, "fsencode", lambda word: word.encode("latin-1"))
    refused = process.unpassable(["/bin/sh", "-c", "echo 'bad \u2192 thing'"], None)
    assert refused is not None
    assert str(refused).startswith(
        "cannot run '/bin/sh': argument 2 holds '\u2192', which this locale's encoding ("
    )
    assert str(refused).endswith("cannot pass; run ninja under a UTF-8 locale (LANG=C.UTF-8)")
