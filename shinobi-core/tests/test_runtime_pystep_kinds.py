"""A pystep's path output is held to its declared kind, as a cab's is: a File
returned as a directory (or a Directory or an MS as a file) passed, and the
step that read it took the blame."""

from __future__ import annotations

from pathlib import Path

import pytest

import shinobi
from shinobi import Recipe
from shinobi.runner import run_recipe
from shinobi.steps import MS, Directory, File


@shinobi.pystep
def makes_a_directory() -> File:
    Path("product").mkdir()
    return Path("product")


@shinobi.pystep
def makes_a_file() -> Directory:
    Path("product").write_text("x")
    return Path("product")


@shinobi.pystep
def makes_files_for_an_ms() -> list[MS]:
    Path("a.ms").mkdir()
    Path("b.ms").write_text("x")
    return [Path("a.ms"), Path("b.ms")]


@shinobi.pystep
def makes_what_it_says() -> Directory:
    Path("product").mkdir()
    return Path("product")


def _run(step: object, here: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str | None]:
    monkeypatch.chdir(here)  # the function writes in the run's directory, as a tool does
    recipe = Recipe("r")
    recipe.add_step("make", step)
    made = run_recipe(recipe, cwd=here, use_cache=False).steps[0]
    return made.status, made.error


@pytest.mark.parametrize(
    ("step", "said"),
    [
        (makes_a_directory, "'product' is a directory, but the output is declared a File"),
        (makes_a_file, "'product' is not a directory, but the output is declared a Directory"),
        (makes_files_for_an_ms, "'b.ms' is not a directory, but the output is declared an MS"),
    ],
)
def test_a_pystep_output_of_the_wrong_kind_fails_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: object, said: str
) -> None:
    assert _run(step, tmp_path, monkeypatch) == ("failed", f"the pystep's output 'result': {said}")


def test_a_pystep_output_of_its_declared_kind_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _run(makes_what_it_says, tmp_path, monkeypatch) == ("ok", None)
