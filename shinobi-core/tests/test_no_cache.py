"""``ninja run --no-cache`` runs every step and stores what it made, in
place of the entries it bypassed; a disabled cache is neither read nor written."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import in_process

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe

MEASURED = """
from pathlib import Path
from pydantic import BaseModel
from shinobi.steps import Cab, File, ParamMeta, Recipe, Wrangler

class MOut(BaseModel):
    rms: str

# the script is named inside the -c string: the key cannot see it change
measure = Cab("measure", ["sh", "-c", "sh tools/measure.sh"], None, MOut,
              wranglers=[Wrangler(r"rms: (\\S+)", "output", output="rms")])

class CIn(BaseModel):
    rms: str
    out: Path

class COut(BaseModel):
    out: File

clean = Cab("clean", ["sh", "-c", 'echo "$0" > "$1"'], CIn, COut,
            {"rms": ParamMeta(positional=True), "out": ParamMeta(positional=True)})

pipe = Recipe("pipe")
pipe.add_step("measure", measure)
pipe.add_step("clean", clean, rms=pipe.outputs.measure.rms, out=Path("clean.txt"))
"""


def _run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, str]:
    code, out, err = in_process(capsys, "run", *args, "--json")
    assert code == 0, err
    return {step["name"]: step["status"] for step in json.loads(out)["steps"]}


def _entries(cache: Path) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in sorted(cache.glob("entries/*/*.json"))]


@pytest.fixture
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "r.py").write_text(textwrap.dedent(MEASURED))
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "measure.sh").write_text('echo "rms: 1"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_no_cache_stores_what_it_ran_so_the_next_run_replays_the_new_result(
    measured: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --no-cache run left the entry it bypassed: the next plain run replayed the
    old rms, and `clean` rewrote its product from it."""
    assert _run_json(capsys, "r.py:pipe") == {"measure": "ok", "clean": "ok"}
    (measured / "tools" / "measure.sh").write_text('echo "rms: 2"\n')
    fresh = _run_json(capsys, "r.py:pipe", "--no-cache", "--provenance")
    assert fresh == {"measure": "ok", "clean": "ok"}
    assert (measured / "clean.txt").read_text() == "2\n"
    assert _run_json(capsys, "r.py:pipe") == {"measure": "cached", "clean": "cached"}
    assert (measured / "clean.txt").read_text() == "2\n"
    (manifest,) = (measured / ".shinobi" / "runs").glob("*/manifest.json")  # --no-cache's
    document = json.loads(manifest.read_text())
    assert document["config"]["cache"] == {"enabled": True, "refreshed": True}
    assert all(step["input_digests"] == [] for step in document["steps"])  # keyed, no inputs


def test_no_cache_with_the_cache_disabled_stores_nothing(
    measured: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CACHE_ENABLED", "0")
    assert _run_json(capsys, "r.py:pipe", "--no-cache") == {"measure": "ok", "clean": "ok"}
    assert _entries(measured / ".cache") == []


def test_run_recipe_without_the_cache_neither_reads_nor_stores(tmp_path: Path) -> None:
    """``use_cache=False`` keeps meaning no cache at all; ``refresh_cache`` stores."""
    cache = tmp_path / "cache"
    config = load_config({"cache.dir": str(cache)})
    cab = Cab("w", ["/bin/sh", "-c", "echo x > w.txt"])
    recipe = Recipe("one")
    recipe.add_step("w", cab)
    assert run_recipe(recipe, config=config, cwd=tmp_path, use_cache=False).ok
    assert _entries(cache) == []
    first = run_recipe(recipe, config=config, cwd=tmp_path, refresh_cache=True)
    assert [s.status for s in first.steps] == ["ok"] and len(_entries(cache)) == 1
    again = run_recipe(recipe, config=config, cwd=tmp_path, refresh_cache=True)
    assert [s.status for s in again.steps] == ["ok"]  # never read, even when there
    assert [s.status for s in run_recipe(recipe, config=config, cwd=tmp_path).steps] == ["cached"]
