"""A secret input the tool echoes is masked in what ninja
words from the tool's output (its error, its warnings), not only in argv."""

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

SECRET = "hunter2"

ECHOES = """\
from pydantic import BaseModel, SecretStr
from shinobi import Recipe
from shinobi.steps import Cab, ParamMeta

class In(BaseModel):
    token: SecretStr

class N(BaseModel):
    pass

t = Cab(name="t", command=["sh", "-c", 'echo "got $1" >&2; exit 1', "sh"],
        inputs_model=In, outputs_model=N, field_meta={"token": ParamMeta(positional=True)})
r = Recipe("s", In, N)
r.add_step("t", t, token=r.inputs.token)
"""

Ninja = Callable[..., subprocess.CompletedProcess[str]]


def _manifests(root: Path) -> list[str]:
    return [p.read_text() for p in (root / ".shinobi" / "runs").glob("*/manifest.json")]


def test_a_failed_steps_error_from_its_stderr_masks_the_secret(
    ninja: Ninja, recipe_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    """``got hunter2``, the tool's last stderr line, reached progress, the run's
    error, ``--json`` and the manifest in clear."""
    path = recipe_file(ECHOES, "s.py")
    shown = ninja("run", f"{path}:r", "--token", SECRET, "--provenance")
    assert shown.returncode == 1
    assert "exited with code 1: got **********" in shown.stderr
    assert SECRET not in shown.stdout + shown.stderr
    as_json = ninja("run", f"{path}:r", "--token", SECRET, "--json")
    assert as_json.returncode == 1
    assert SECRET not in as_json.stdout
    assert json.loads(as_json.stdout)["error"] == "exited with code 1: got **********"
    manifests = _manifests(tmp_path)
    assert manifests and all(SECRET not in text for text in manifests)
    logs = list((tmp_path / ".shinobi" / "runs").glob("*/logs/t.err"))
    assert logs and all(SECRET in log.read_text() for log in logs)  # the tool's own bytes


class In(BaseModel):
    token: SecretStr


class Out(BaseModel):
    pass


def _wrangled(script: str, action: str) -> Recipe:
    cab = Cab(
        name="w",
        command=["sh", "-c", script, "sh"],
        inputs_model=In,
        outputs_model=Out,
        field_meta={"token": ParamMeta(positional=True)},
        wranglers=[Wrangler(r"^(WARN|SEVERE)", action)],  # type: ignore[arg-type]
    )
    recipe = Recipe("wr", In, Out)
    recipe.add_step("w", cab, token=recipe.inputs.token)
    return recipe


def _run(recipe: Recipe, tmp_path: Path, **config: Any) -> Any:
    settings = load_config({"cache.enabled": False, **config})
    return run_recipe(recipe, {"token": SECRET}, config=settings, cwd=tmp_path, provenance=True)


def test_wrangled_warnings_and_errors_mask_the_secret(tmp_path: Path) -> None:
    warned = _run(_wrangled('echo "WARN retrying $1"', "warning"), tmp_path)
    assert warned.ok
    assert any("WARN retrying **********" in w for w in warned.steps[0].warnings)
    assert SECRET not in json.dumps(warned.steps[0].warnings + warned.warnings)
    assert SECRET not in warned.steps[0].stdout
    failed = _run(_wrangled('echo "SEVERE bad token $1"', "error"), tmp_path)
    assert not failed.ok
    assert failed.error is not None and "SEVERE bad token **********" in failed.error
    assert all(SECRET not in text for text in _manifests(tmp_path))


def test_a_step_without_secrets_keeps_its_text_as_the_tool_said_it(tmp_path: Path) -> None:
    """Only known secret values are masked: the same words with no secret input stay."""

    class Plain(BaseModel):
        token: str

    cab = Cab(
        name="p",
        command=["sh", "-c", 'echo "got $1" >&2; exit 1', "sh"],
        inputs_model=Plain,
        outputs_model=Out,
        field_meta={"token": ParamMeta(positional=True)},
    )
    recipe = Recipe("plain", Plain, Out)
    recipe.add_step("p", cab, token=recipe.inputs.token)
    result = _run(recipe, tmp_path)
    assert result.error == f"exited with code 1: got {SECRET}"


def test_the_step_cache_keeps_the_masked_text(tmp_path: Path) -> None:
    """A cached result's output and warnings are replayed in later runs' records."""
    recipe = _wrangled('echo "WARN retrying $1"', "warning")
    first = _run(recipe, tmp_path, **{"cache.enabled": True})
    again = _run(recipe, tmp_path, **{"cache.enabled": True})
    assert first.ok and again.ok and again.steps[0].status == "cached"
    assert any("**********" in w for w in again.steps[0].warnings)
    kept = [p for p in (tmp_path / ".cache").rglob("*") if p.is_file()]
    assert kept and all(SECRET.encode() not in p.read_bytes() for p in kept)
