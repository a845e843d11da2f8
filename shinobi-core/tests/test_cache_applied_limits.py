"""The step cache replayed a result stored while the declared limits
were not applied (``enforce_resources = "never"``, or ``auto`` dropping one the
host cannot enforce) as "cached" under ``always``, so the out-of-memory kill
the user asked for never happened. An entry now records the limits its run
applied, and under ``always`` only one made with them is a hit."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

import shinobi.backends as backends
from shinobi.backends.base import (
    Backend,
    BackendRun,
    Capabilities,
    Invocation,
    Rendered,
    RunControl,
)
from shinobi.backends.native import NativeBackend
from shinobi.cache_limits import FIELD, limits_satisfy
from shinobi.config import load_config
from shinobi.resources import Resources
from shinobi.runner import run_recipe
from shinobi.steps import Cab, Recipe

MiB = 2**20


class Enforcing(NativeBackend):
    """Runs natively, but stands for a container backend: it enforces declared
    limits by ``enforce_resources``, and ``drops`` says this host cannot apply one
    (what ``Rendered.warnings`` reports, as a container backend's does)."""

    capabilities: ClassVar[Capabilities] = Capabilities(enforces_resources=True)
    settings_keys = frozenset({"enforce_resources"})
    drops: ClassVar[bool] = False

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        applied = self.settings.get("enforce_resources") != "never" and not self.drops
        memory = invocation.resources.memory if invocation.resources else None
        if applied and memory is not None and memory < 100 * MiB:  # the tool needs 100MiB
            with Path(invocation.cwd, "counter.txt").open("a") as counter:
                counter.write("killed\n")
            return BackendRun(returncode=137, oom=True, reason="killed: out of memory")
        return super().run(invocation, control)

    def render_for_job(self, invocation: Invocation, *, batch: bool = False) -> Rendered:
        dropped = ("cannot enforce --memory on this host",) if self.drops else ()
        return Rendered(list(invocation.argv), warnings=dropped)


@pytest.fixture
def enforcing(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[Enforcing]]:
    """Every step of a run goes to :class:`Enforcing` (named native)."""
    real = backends.get_backend

    def get_backend(name: str, settings: Mapping[str, Any] | None = None) -> Backend:
        return Enforcing(settings) if name == "native" else real(name, settings)

    monkeypatch.setattr(backends, "get_backend", get_backend)
    yield Enforcing
    Enforcing.drops = False


def _recipe(memory: str = "64MiB") -> Recipe:
    recipe = Recipe("hog")
    cab = Cab("hog", ["/bin/sh", "-c", "echo ran >> counter.txt"])
    recipe.add_step("hog", cab, resources=Resources(cpus=1, memory=memory))
    return recipe


def _run(tmp_path: Path, policy: str, memory: str = "64MiB") -> str:
    """The step's status in a run under ``policy``."""
    config = load_config(
        {"cache.dir": str(tmp_path / "cache"), "execution.enforce_resources": policy}
    )
    result = run_recipe(_recipe(memory), {}, config=config, cwd=tmp_path)
    (step,) = result.steps
    return step.status


def _counted(tmp_path: Path) -> list[str]:
    return (tmp_path / "counter.txt").read_text().split()


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("entries/*/*.json"))


def test_a_result_made_without_limits_runs_again_under_always(
    tmp_path: Path, enforcing: type[Enforcing]
) -> None:
    """The audit's repro: stored under never, then always killed it, not "cached"."""
    assert _run(tmp_path, "never") == "ok"
    assert _run(tmp_path, "always") == "failed"
    assert _counted(tmp_path) == ["ran", "killed"]
    assert _run(tmp_path, "auto") == "cached"  # auto and never take any entry, as before


def test_a_result_made_under_the_limits_is_good_for_any_policy(
    tmp_path: Path, enforcing: type[Enforcing]
) -> None:
    assert _run(tmp_path, "never", memory="200MiB") == "ok"
    assert _run(tmp_path, "always", memory="200MiB") == "ok"  # made without: runs, under them
    (entry,) = _entries(tmp_path)
    assert json.loads(entry.read_text())[FIELD] == {"cpus": 1.0, "memory": 200 * MiB}
    for policy in ("always", "never", "auto"):
        assert _run(tmp_path, policy, memory="200MiB") == "cached"
    assert _run(tmp_path, "always", memory="300MiB") == "cached"  # a larger limit holds too
    assert _run(tmp_path, "always", memory="150MiB") == "ok"  # a smaller one: run under it
    assert _counted(tmp_path) == ["ran", "ran", "ran"]


def test_a_limit_that_auto_dropped_counts_as_not_applied(
    tmp_path: Path, enforcing: type[Enforcing]
) -> None:
    """apptainer unprivileged on cgroup v1: auto ran the step without --memory."""
    enforcing.drops = True
    assert _run(tmp_path, "auto") == "ok"
    (entry,) = _entries(tmp_path)
    assert json.loads(entry.read_text())[FIELD] is None
    enforcing.drops = False
    assert _run(tmp_path, "always") == "failed"
    assert _counted(tmp_path) == ["ran", "killed"]


def test_an_entry_from_before_the_field_counts_as_made_without_limits_only_under_always(
    tmp_path: Path, enforcing: type[Enforcing]
) -> None:
    assert _run(tmp_path, "auto", memory="200MiB") == "ok"
    (entry,) = _entries(tmp_path)
    data = json.loads(entry.read_text())
    del data[FIELD]
    entry.write_text(json.dumps(data))
    assert _run(tmp_path, "auto", memory="200MiB") == "cached"
    assert _run(tmp_path, "always", memory="200MiB") == "ok"
    assert _counted(tmp_path) == ["ran", "ran"]


def test_native_steps_enforce_nothing_so_always_keeps_their_hits(tmp_path: Path) -> None:
    assert _run(tmp_path, "never") == "ok"
    assert _run(tmp_path, "always") == "cached"
    assert _counted(tmp_path) == ["ran"]


@pytest.mark.parametrize(
    ("recorded", "wanted", "ok"),
    [
        ({"cpus": 1.0, "memory": 64}, {"cpus": 1.0, "memory": 64}, True),
        ({"cpus": 1.0, "memory": 64}, {"cpus": None, "memory": 128}, True),
        ({"cpus": 2.0, "memory": 64}, {"cpus": 1.0, "memory": None}, False),
        ({"cpus": None, "memory": 64}, {"cpus": 1.0, "memory": 64}, False),
        (None, {"cpus": None, "memory": 64}, False),  # made without limits
        ({"memory": True}, {"cpus": None, "memory": 64}, False),  # damaged
        ("x", {"cpus": None, "memory": 64}, False),
    ],
)
def test_limits_satisfy(recorded: Any, wanted: dict[str, float | None], ok: bool) -> None:
    assert limits_satisfy(recorded, wanted) is ok
