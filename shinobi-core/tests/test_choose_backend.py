"""Which backend runs a step: a declared venv is asked for, unless the step says otherwise."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from shinobi.dispatch import choose_backend
from shinobi.errors import ShinobiError


class _Session:
    def __init__(self, default: str) -> None:
        self.default_backend = default
        self.warnings: list[str] = []

    def backend(self, name: str) -> Any:
        if name == "missing":
            raise ShinobiError("no backend 'missing'")
        return SimpleNamespace(capabilities=SimpleNamespace(images=name in ("docker", "podman")))

    def warn(self, message: str, *, once: str | None = None) -> None:
        self.warnings.append(message)


def _node(venv: str | None, image: str | None = None, backend: str | None = None) -> Any:
    return SimpleNamespace(name="t", venv=venv, backend=backend, step=SimpleNamespace(image=image))


@pytest.mark.parametrize(
    ("default", "node", "chosen"),
    [
        ("native", _node("ve nv"), "venv"),
        ("docker", _node("ve nv"), "venv"),  # no image to run in: its venv (was refused)
        ("docker", _node("ve nv", image="busybox"), "docker"),
        ("docker", _node(None), "docker"),
        ("slurm", _node("ve nv"), "slurm"),  # a batch system runs commands, not images
        ("docker", _node("ve nv", backend="docker"), "docker"),  # the step's own word
        ("missing", _node("ve nv"), "missing"),
    ],
)
def test_a_declared_venv_is_what_a_step_without_an_image_runs_in(
    default: str, node: Any, chosen: str
) -> None:
    session = _Session(default)
    assert choose_backend(session, node) == chosen  # type: ignore[arg-type]
    if default == "docker" and chosen == "venv":
        assert session.warnings == [
            "step 't' names no image but a venv, so it runs in its venv rather than in a"
            " docker container"
        ]


def test_ctx_run_backend_wins_over_a_declared_venv() -> None:
    assert choose_backend(_Session("native"), _node("v"), "native") == "native"  # type: ignore[arg-type]
