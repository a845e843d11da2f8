"""The examples of loops, scatter and proxies, run for real through ``ninja run``.

The example tools append to a log of what ran and stamp their FITS headers,
so every claim here (three cycles ran, seven were skipped, four slices ran
at once) is read from what the tools themselves recorded.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.graph import build_graph
from shinobi.loaders import load_target
from shinobi.offload.eligibility import check_offloadable
from shinobi.plan import plan_graph

Ninja = Callable[..., subprocess.CompletedProcess[str]]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES / "tools"))
from fits import read_image  # noqa: E402


def ran(log: Path) -> list[str]:
    """The log's lines without their timestamps, reduced to tool and cycle."""
    lines = []
    for line in log.read_text().splitlines():
        words = line.split()[1:]
        lines.append(" ".join(w for w in words[:2] if not w.startswith(("noise", "gain"))))
    return lines


def cycles(n: int) -> list[str]:
    return [
        f"{tool} cycle={k}" for k in range(1, n + 1) for tool in ("calibrate", "image", "assess")
    ]


# -- selfcal_loop ------------------------------------------------------------------


def test_selfcal_converges_at_cycle_three_and_skips_the_rest(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("run", f"{EXAMPLES}/selfcal_loop.py:selfcal", "--json")
    assert done.returncode == 0, done.stderr
    assert ran(tmp_path / "selfcal.log") == [
        "observe obs.ms",
        *cycles(3),
        "publish selfcal-image.fits",
    ]
    result = json.loads(done.stdout)
    status = {s["name"]: s["status"] for s in result["steps"]}
    for k in range(1, 4):
        assert {status[f"selfcal.{k}.{t}"] for t in ("calibrate", "image", "assess")} == {"ok"}
    for k in range(4, 11):
        assert {status[f"selfcal.{k}.{t}"] for t in ("calibrate", "image", "assess")} == {"skipped"}
    # The final output is loop.outputs: iteration 10's, passed through from iteration 3.
    assert result["outputs"] == {
        "image": "selfcal-image.fits",
        "converged": "selfcal.converged",
        "final": "final-image.fits",
    }
    header, _ = read_image(str(tmp_path / "final-image.fits"))
    assert header["CYCLE"] == 3 and float(header["NOISE"]) <= 3.0  # type: ignore[arg-type]
    assert (tmp_path / "final-image.fits").read_bytes() == (
        tmp_path / "selfcal-image.fits"
    ).read_bytes()
    assert "at cycle 3" in (tmp_path / "selfcal.converged").read_text()


@pytest.mark.parametrize(("threshold", "cycles_run"), [("10", 2), ("30", 1), ("0.5", 10)])
def test_the_number_of_cycles_follows_the_data(
    ninja: Ninja, tmp_path: Path, threshold: str, cycles_run: int
) -> None:
    done = ninja("run", f"{EXAMPLES}/selfcal_loop.py:selfcal", "--threshold", threshold)
    assert done.returncode == 0, done.stderr
    assert ran(tmp_path / "selfcal.log")[1:-1] == cycles(cycles_run)


def test_a_second_run_starts_afresh_despite_the_old_flag(ninja: Ninja, tmp_path: Path) -> None:
    for _ in range(2):
        done = ninja("run", f"{EXAMPLES}/selfcal_loop.py:selfcal", "--no-cache")
        assert done.returncode == 0, done.stderr
        assert ran(tmp_path / "selfcal.log")[1:-1] == cycles(3)


def test_selfcal_is_offloadable_with_one_until_path_for_every_cycle(tmp_path: Path) -> None:
    recipe = load_target(f"{EXAMPLES}/selfcal_loop.py:selfcal")
    plan = plan_graph(
        build_graph(recipe), {"ms": Path("/scratch/obs.ms")} | _defaults(recipe), str(tmp_path)
    )
    assert check_offloadable(plan) == []
    guards = {str(s.node.guard) for s in plan.steps if s.node.guard is not None}
    flags = {str(s.outputs["converged"]) for s in plan.steps if s.node.name.endswith(".assess")}
    assert len(guards) == 9 and flags == {"selfcal.converged"}  # one path, every cycle


def _defaults(recipe: object) -> dict[str, object]:
    model = recipe.inputs_model  # type: ignore[attr-defined]
    return {k: v for k, v in model().model_dump().items() if k != "ms"}


def test_selfcal_dryrun_draws_ten_cycles_and_runs_nothing(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("run", f"{EXAMPLES}/selfcal_loop.py:selfcal", "--dryrun")
    assert done.returncode == 0, done.stderr
    assert "selfcal.10.assess" in done.stdout and "loop 'selfcal', iteration 10" in done.stdout
    assert not (tmp_path / "selfcal.log").exists() and not (tmp_path / "obs.ms").exists()


# -- scatter_demo -------------------------------------------------------------------


def spans(tmp_path: Path) -> list[tuple[float, float]]:
    found = []
    for k in range(4):
        header, _ = read_image(str(tmp_path / f"field{k}-image.fits"))
        found.append((float(header["TSTART"]), float(header["TEND"])))  # type: ignore[arg-type]
    return found


def test_four_slices_at_four_workers_overlap(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("run", f"{EXAMPLES}/scatter_demo.py:fields", "--json")
    assert done.returncode == 0, done.stderr
    times = spans(tmp_path)
    assert max(s for s, _ in times) < min(e for _, e in times)  # all four at one moment
    assert json.loads((tmp_path / "mosaic.json").read_text())["overlapped"] is True
    started = re.findall(r"\bstart\s+(\S+)", done.stderr)
    assert sorted(n for n in started if n.startswith("image[")) == [f"image[{k}]" for k in range(4)]
    outputs = json.loads(done.stdout)["outputs"]
    assert outputs["images"] == [f"field{k}-image.fits" for k in range(4)]


def test_a_smaller_budget_queues_the_slices(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja(
        "run",
        f"{EXAMPLES}/scatter_demo.py:fields",
        "--seconds",
        "0.5",
        env={"SHINOBI_EXECUTION_MEMORY": "512MiB"},
    )
    assert done.returncode == 0, done.stderr
    times = spans(tmp_path)
    for start, _ in times:  # never more than two slices (256MiB each) at any moment
        assert sum(1 for s, e in times if s <= start < e) <= 2
    assert json.loads((tmp_path / "mosaic.json").read_text())["overlapped"] is False


def test_scatter_dryrun_counts_slices_and_shows_the_footprint(ninja: Ninja) -> None:
    done = ninja("run", f"{EXAMPLES}/scatter_demo.py:fields", "--dryrun")
    assert done.returncode == 0, done.stderr
    assert "scatter over ms, prefix: 4 slices" in done.stdout
    assert "footprint: mem=256MiB" in done.stdout


def test_mismatched_scatter_lists_are_refused_before_anything_runs(
    ninja: Ninja, tmp_path: Path
) -> None:
    done = ninja("run", f"{EXAMPLES}/scatter_demo.py:fields", "--names", "a", "--names", "b")
    assert done.returncode == 2
    assert (
        "step 'image': scattered inputs must have the same length:"
        " ms has 4 (output 'ms' of step 'observe'), prefix has 2 (input 'names')" in done.stderr
    )
    assert not list(tmp_path.glob("*.ms"))


# -- proxy_demo -----------------------------------------------------------------------


def test_the_proxy_example_runs_and_sets_its_output(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("run", f"{EXAMPLES}/proxy_demo.py:demo", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outputs"] == {"mask": "demo-image.fits.mask.fits"}
    header, pixels = read_image(str(tmp_path / "demo-image.fits.mask.fits"))
    assert header["BITPIX"] == 8 and 0 < sum(pixels) < len(pixels)
    # The recipe as the guide writes it, on an MS made beforehand.
    made = subprocess.run(
        [sys.executable, str(EXAMPLES / "tools" / "observe.py"), "mine.ms"], cwd=tmp_path
    )
    assert made.returncode == 0
    done = ninja("run", f"{EXAMPLES}/proxy_demo.py:selfcal", "--ms", "mine.ms", "--prefix", "p")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "mask = p-image.fits.mask.fits\n"
    assert (tmp_path / "p-image.fits.mask.fits").exists()
