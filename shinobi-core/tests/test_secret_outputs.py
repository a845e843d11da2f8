"""A secret input that the tool echoes into a wrangled output was
shown and kept in clear (the run's last lines, ``--json``, the manifest, the
step cache). It is masked where ninja shows or keeps it, the steps downstream
still get the value, and such a result is not cached."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr

from shinobi.config import load_config
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe, Wrangler
from shinobi.steps.argv import MASK

SECRET = "hunter2secretXYZ"

ECHOES = """\
from pathlib import Path
from pydantic import BaseModel, SecretStr
from shinobi.steps import File, Cab, ParamMeta, Recipe, Wrangler

class In(BaseModel):
    token: SecretStr
    out: Path

class Out(BaseModel):
    out: File | None = None
    said: str | None = None

c = Cab(name="c", command=["sh", "-c", 'echo "tok=$0" > "$1"; echo "said=pre-$0-post"'],
        inputs_model=In, outputs_model=Out,
        field_meta={"token": ParamMeta(positional=True), "out": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"said=(.*)", "output", output="said")])

class RIn(BaseModel):
    token: SecretStr

class ROut(BaseModel):
    said: str | None = None

r = Recipe("r", RIn, ROut)
r.add_step("c", c, token=r.inputs.token, out=Path("o.txt"))
r.set_output("said", r.outputs.c.said)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _kept(root: Path) -> list[Path]:
    """Every file of the run folders (but the tool's own logs) and of the cache."""
    runs = [p for p in (root / ".shinobi").rglob("*") if p.is_file() and "logs" not in p.parts]
    return runs + [p for p in (root / ".cache").rglob("*") if p.is_file()]


def test_an_echoed_secret_is_masked_in_stdout_json_manifest_and_cache(
    ninja: Ninja, recipe_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    path = recipe_file(ECHOES, "sec.py")
    shown = ninja("run", f"{path}:r", "--token", SECRET, "--provenance")
    assert shown.returncode == 0, shown.stderr
    assert "said = pre-**********-post" in shown.stdout
    assert SECRET not in shown.stdout + shown.stderr
    as_json = ninja("run", f"{path}:r", "--token", SECRET, "--json", "--provenance")
    assert as_json.returncode == 0, as_json.stderr
    assert SECRET not in as_json.stdout
    document = json.loads(as_json.stdout)
    assert document["outputs"]["said"] == "pre-**********-post"
    assert document["steps"][0]["status"] == "ok"  # not replayed: it was not cached
    manifests = list((tmp_path / ".shinobi" / "runs").glob("*/manifest.json"))
    assert len(manifests) == 2
    for manifest in manifests:
        data = json.loads(manifest.read_text())
        assert data["outputs"]["said"] == "pre-**********-post"
        assert data["steps"][0]["outputs"]["said"] == "pre-**********-post"
    assert all(SECRET.encode() not in p.read_bytes() for p in _kept(tmp_path))
    assert not list((tmp_path / ".cache").glob("entries/*/*.json"))
    assert (tmp_path / "o.txt").read_text() == f"tok={SECRET}\n"  # the tool got it


class In(BaseModel):
    token: SecretStr


class Said(BaseModel):
    said: str | None = None


class Text(BaseModel):
    text: str


class Got(BaseModel):
    got: str | None = None


def _chain(tmp_path: Path) -> Recipe:
    """``echo`` says the token, which ``keep`` writes to a file and says back."""
    echo = Cab(
        name="echo",
        command=["sh", "-c", 'echo "said=$0"'],
        inputs_model=In,
        outputs_model=Said,
        field_meta={"token": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"said=(.*)", "output", output="said")],
    )
    keep = Cab(
        name="keep",
        command=["sh", "-c", f'printf %s "$0" > {tmp_path}/got.txt; echo "got=$0"'],
        inputs_model=Text,
        outputs_model=Got,
        field_meta={"text": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"got=(.*)", "output", output="got")],
    )
    recipe = Recipe("chain", In, Got)
    recipe.add_step("echo", echo, token=recipe.inputs.token)
    recipe.add_step("keep", keep, text=recipe.outputs.echo.said)
    recipe.set_output("got", recipe.outputs.keep.got)
    return recipe


def _run(recipe: Recipe, tmp_path: Path) -> Any:
    settings = load_config({"cache.enabled": True})
    return run_recipe(recipe, {"token": SECRET}, config=settings, cwd=tmp_path, provenance=True)


def test_the_next_step_gets_the_real_value_and_only_the_records_mask_it(tmp_path: Path) -> None:
    result = _run(_chain(tmp_path), tmp_path)
    assert result.ok, result.error
    assert (tmp_path / "got.txt").read_text() == SECRET  # not the mask
    assert result.steps[0].outputs == {"said": SECRET}
    assert result.outputs == {"got": SECRET}  # Python's caller gave it, and gets it
    manifest = next((tmp_path / ".shinobi" / "runs").glob("*/manifest.json")).read_text()
    assert SECRET not in manifest
    assert json.loads(manifest)["outputs"] == {"got": MASK}


def test_a_step_whose_output_holds_the_secret_is_not_cached(tmp_path: Path) -> None:
    """The echoing step and the one downstream (whose output holds it too) run
    again; a step given a secret that says nothing of it is cached as before."""
    recipe = _chain(tmp_path)
    quiet = Cab(
        name="quiet",
        command=["sh", "-c", "echo said=nothing", "sh"],
        inputs_model=In,
        outputs_model=Said,
        field_meta={"token": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"said=(.*)", "output", output="said")],
    )
    recipe.add_step("quiet", quiet, token=recipe.inputs.token)
    first = _run(recipe, tmp_path)
    again = _run(recipe, tmp_path)
    assert first.ok and again.ok
    assert {s.name: s.status for s in again.steps} == {
        "echo": "ok",
        "keep": "ok",
        "quiet": "cached",
    }
    assert again.outputs == {"got": SECRET}
    kept = [p for p in (tmp_path / ".cache").rglob("*") if p.is_file()]
    assert kept and all(SECRET.encode() not in p.read_bytes() for p in kept)


def test_masking_a_value_keeps_what_holds_no_secret() -> None:
    from shinobi.steps.argv import masked, shows_secret

    value = {"a": [Path(f"/x/{SECRET}.txt"), 3, None], "b": "plain", "c": 1.5}
    assert masked(value, [SECRET]) == {"a": [f"/x/{MASK}.txt", 3, None], "b": "plain", "c": 1.5}
    assert shows_secret(value, [SECRET])
    assert not shows_secret({"a": [Path("/x"), 3], "b": "plain"}, [SECRET])
