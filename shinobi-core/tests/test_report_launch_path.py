"""``ninja report`` given a compiled launch's folder or its handle.json says what it
says for the launch's id: reports are of local runs, ``ninja status``/``logs`` show
the launch. The folder got "made without provenance ... run again with ``ninja run
--provenance``", and the handle "not a shinobi run manifest"."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_in_process import in_process as ninja
from test_launch_fixtures import FakeTarget, engine, launch

__all__ = ["engine"]  # the fixture, imported so pytest finds it


#: Where ``ninja compile --submit`` puts a launch's handle, under its workspace.
PATHS = {
    "folder": ".shinobi/pipe/run1",
    "handle": ".shinobi/pipe/run1/handle.json",
    "recipe folder": ".shinobi/pipe",
    "recipe handle": ".shinobi/pipe/handle.json",
}


@pytest.mark.parametrize("named", sorted(PATHS))
def test_report_of_a_launch_by_its_path_points_to_status_and_logs(
    engine: type[FakeTarget], tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    launch(tmp_path / "my runs")
    path = str(tmp_path / "my runs" / PATHS[named])
    code, _, err = ninja(capsys, "report", path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err == (
        f"ninja: error: {path!r} is the launch pipe/run1, compiled for a cluster: reports are"
        f" of local runs; `ninja status '{path}'` and `ninja logs '{path}'` show what it did\n"
    )


def test_a_run_folder_without_a_handle_still_gets_the_provenance_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / ".shinobi" / "runs" / "20260101-000000-abcdef"
    (run / "logs").mkdir(parents=True)
    code, _, err = ninja(capsys, "report", str(run))
    assert code == 2
    assert "was made without provenance" in err


def test_a_run_id_is_found_in_the_configured_workdir(tmp_path: Path) -> None:
    """``ninja report RUN`` looked in the current directory only, where ``ninja runs``
    and ``ninja logs`` (and its own --help) take ``execution.workdir``."""
    import os
    import subprocess
    import sys

    project, store = tmp_path / "proj", tmp_path / "store"
    project.mkdir()
    store.mkdir()
    (project / "r.py").write_text(
        "from shinobi.steps import Cab, Recipe\nr = Recipe('r')\nr.add_step('t', Cab('t', ['true']))\n"
    )
    script = Path(sys.executable).with_name("ninja")
    env = {**os.environ, "SHINOBI_EXECUTION_WORKDIR": str(store)}

    def ninja(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(script), *args], cwd=project, env=env, capture_output=True, text=True
        )

    assert ninja("run", "r.py:r", "--provenance").returncode == 0
    (run,) = (store / ".shinobi" / "runs").iterdir()
    report = ninja("report", run.name, "-o", "-")
    assert report.returncode == 0, report.stderr
    assert report.stdout.startswith("<!DOCTYPE html>")
