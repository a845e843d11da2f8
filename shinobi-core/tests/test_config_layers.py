"""Every layer overrides the ones before it key by key, whatever shape it comes in.

An empty table in the project file (``[execution]`` with its keys commented
out) was a value of its own: it replaced the section that the user file, the
environment and the command line had filled, so ``-j 2`` and
``SHINOBI_EXECUTION_MAX_WORKERS`` were lost while ``config show`` still named
them as the source of the default it printed. A backend table given as JSON
in a variable replaced the whole table the same way.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError

USER = """\
[execution]
max_workers = 3
grace_period = 5
[backend.docker]
network = "host"
init = false
[provenance]
enabled = true
"""


@pytest.fixture
def layered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user file with settings in three sections; the project directory, returned."""
    (tmp_path / "user.toml").write_text(USER)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "user.toml"))
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.mark.parametrize("table", ["[execution]", "[provenance]", "[backend]", "[backend.docker]"])
def test_an_empty_table_in_the_project_file_sets_nothing(layered: Path, table: str) -> None:
    (layered / "shinobi.toml").write_text(f"{table}\n# max_workers = 8\n")
    config = load_config(cwd=layered, environ={})
    assert config.execution.max_workers == 3 and config.execution.grace_period == 5
    assert config.provenance.enabled is True
    assert config.backend_settings("docker")["network"] == "host"
    assert config.sources["execution.max_workers"].startswith("user file ")


def test_the_environment_and_the_command_line_still_win_over_an_empty_table(
    layered: Path,
) -> None:
    (layered / "shinobi.toml").write_text("[execution]\n")
    environ = {"SHINOBI_EXECUTION_GRACE_PERIOD": "7"}
    config = load_config({"execution.max_workers": 2}, cwd=layered, environ=environ)
    assert config.execution.max_workers == 2 and config.execution.grace_period == 7
    assert config.sources["execution.max_workers"] == "command line"


@pytest.mark.parametrize("wanted", [True, False], ids=["--provenance", "--no-provenance"])
def test_a_flag_wins_over_the_variable_of_the_same_setting(layered: Path, wanted: bool) -> None:
    """A variable exported in a login script is the standing choice, a flag the one
    made for this run: ``SHINOBI_EXECUTION_MAX_WORKERS=1`` must not quietly turn
    ``ninja run -j 4`` into one step at a time. These are the keys ``ninja run``
    passes its ``-j`` and ``--provenance``/``--no-provenance`` as."""
    environ = {
        "SHINOBI_EXECUTION_MAX_WORKERS": "1",
        "SHINOBI_PROVENANCE_ENABLED": "0" if wanted else "1",
    }
    flags = {"execution.max_workers": 4, "provenance.enabled": wanted}
    config = load_config(flags, cwd=layered, environ=environ)
    assert config.execution.max_workers == 4 and config.provenance.enabled is wanted
    assert config.sources["execution.max_workers"] == "command line"
    assert config.sources["provenance.enabled"] == "command line"
    unset = load_config(dict.fromkeys(flags), cwd=layered, environ=environ)  # no flag given
    assert unset.execution.max_workers == 1 and unset.provenance.enabled is not wanted


def test_a_run_goes_by_j_over_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the run itself went by, as its manifest records it: with the layers the
    wrong way round, ``-j 3`` under ``SHINOBI_EXECUTION_MAX_WORKERS=1`` ran one step
    at a time, and nothing said so."""
    import json

    from cli_in_process import in_process

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_EXECUTION_MAX_WORKERS", "1")
    (tmp_path / "r.py").write_text(
        "from shinobi.steps import Cab, Recipe\n"
        "r = Recipe('r')\nr.add_step('t', Cab('t', ['/bin/true']))\n"
    )
    code, _, err = in_process(capsys, "run", "r.py:r", "-j", "3", "--provenance")
    assert code == 0, err
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    recorded = json.loads(manifest.read_text())
    assert recorded["recipe"]["max_workers"] == 3
    assert recorded["config"]["execution"]["max_workers"] == 3


def test_a_table_given_as_json_in_a_variable_sets_its_keys_one_by_one(layered: Path) -> None:
    environ = {"SHINOBI_BACKEND_DOCKER": '{"network": "bridge"}'}
    config = load_config(cwd=layered, environ=environ)
    settings = config.backend_settings("docker")
    assert settings["network"] == "bridge" and settings["init"] is False
    said = "environment variable SHINOBI_BACKEND_DOCKER"
    assert config.sources["backend.docker.network"] == said
    assert config.sources["backend.docker.init"].startswith("user file ")


def test_a_bad_backend_key_is_blamed_on_the_file_that_holds_it(layered: Path) -> None:
    (layered / "shinobi.toml").write_text('[backend]\ndocker = "x"\n')
    with pytest.raises(
        ConfigError, match=r"'backend\.docker' is not a setting \(from project file"
    ):
        load_config(cwd=layered, environ={})


LIST = '[backend.slurm]\nsbatch_opts = ["--partition=debug", "--account=astro"]\n'
TEXT = '[backend.slurm]\nsbatch_opts = "--partition=debug"\n'
TABLE = '[backend.slurm.sbatch_opts]\ntime = "01:00:00"\n'
SHAPES = {LIST: ["--partition=debug", "--account=astro"], TEXT: "--partition=debug"}
SHAPES[TABLE] = {"time": "01:00:00"}


@pytest.mark.parametrize(
    ("lower", "higher"),
    [(LIST, TABLE), (TABLE, LIST), (TEXT, TABLE), (TABLE, TEXT)],
    ids=["table-over-list", "list-over-table", "table-over-text", "text-over-table"],
)
def test_a_higher_layer_replaces_a_value_of_another_shape_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lower: str, higher: str
) -> None:
    """A list in the site file under a table in shinobi.toml nested the table's keys
    into the list: every command, doctor too, ended in an internal error."""
    (tmp_path / "site.toml").write_text(lower)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "site.toml"))
    (tmp_path / "shinobi.toml").write_text(higher)
    config = load_config(cwd=tmp_path, environ={})
    assert config.backend_settings("slurm")["sbatch_opts"] == SHAPES[higher]
    rows = [(key, source) for key, _, source in config.effective() if "sbatch_opts" in key]
    assert rows and all(source.startswith("project file ") for _, source in rows)


def test_a_table_in_a_variable_replaces_a_files_list(layered: Path) -> None:
    (layered / "shinobi.toml").write_text(LIST)
    environ = {"SHINOBI_BACKEND_SLURM_SBATCH_OPTS": '{"qos": "normal"}'}
    config = load_config(cwd=layered, environ=environ)
    assert config.backend_settings("slurm")["sbatch_opts"] == {"qos": "normal"}
    said = "environment variable SHINOBI_BACKEND_SLURM_SBATCH_OPTS"
    assert config.sources["backend.slurm.sbatch_opts.qos"] == said


def test_a_table_over_a_path_is_refused_naming_both_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "site.toml").write_text('[cache]\ndir = "/x"\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "site.toml"))
    (tmp_path / "shinobi.toml").write_text("[cache.dir]\nsub = 1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path, environ={})
    said = str(caught.value)
    assert "'cache.dir' (from project file " in said and "\n" not in said
    assert said.endswith(f"(it replaces the value set in user file {tmp_path / 'site.toml'})")


def test_two_variables_for_one_setting_are_refused_naming_both(layered: Path) -> None:
    """The environment's variables come in no order: which one won was chance."""
    environ = {
        "SHINOBI_BACKEND_SLURM": '{"sbatch_opts": ["--qos=low"]}',
        "SHINOBI_BACKEND_SLURM_SBATCH_OPTS": '{"qos": "normal"}',
    }
    with pytest.raises(ConfigError, match=r"both set backend\.slurm\.sbatch_opts; unset one"):
        load_config(cwd=layered, environ=environ)
