"""Configuration layers and the source each value came from."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.errors import ConfigError


def test_layers_in_order_with_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[execution]\nmax_workers = 2\ngrace_period = 3\n[backend]\ndefault = "venv"\n')
    (tmp_path / "shinobi.toml").write_text("[execution]\nmax_workers = 3\n")
    monkeypatch.setenv("SHINOBI_CONFIG", str(user))
    config = load_config(
        {"provenance.enabled": True},
        cwd=tmp_path,
        environ={"SHINOBI_BACKEND_DEFAULT": "docker", "SHINOBI_CACHE_ENABLED": "false"},
    )
    assert config.execution.max_workers == 3
    assert config.execution.grace_period == 3
    assert config.backend.default == "docker"
    assert config.cache.enabled is False
    assert config.provenance.enabled is True
    sources = {k: s for k, _, s in config.effective()}
    assert sources["execution.max_workers"].startswith("project file")
    assert sources["execution.grace_period"].startswith("user file")
    assert sources["backend.default"] == "environment variable SHINOBI_BACKEND_DEFAULT"
    assert sources["provenance.enabled"] == "command line"
    assert sources["execution.clear_stale_outputs"] == "default"


def test_backend_tables_reach_their_backend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user.toml"
    user.write_text('[backend.slurm]\nsbatch_opts = ["--partition=debug"]\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(user))
    settings = load_config(cwd=tmp_path, environ={}).backend_settings("slurm")
    assert settings["sbatch_opts"] == ["--partition=debug"]
    assert settings["run_as_host_user"] is True


def test_a_bad_value_names_key_and_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(
        ConfigError,
        match=r"'execution.max_workers' \(from environment variable SHINOBI_EXECUTION_MAX_WORKERS\)",
    ):
        load_config(cwd=tmp_path, environ={"SHINOBI_EXECUTION_MAX_WORKERS": "0"})


def test_broken_toml_is_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "user.toml"
    bad.write_text("[execution\n")
    monkeypatch.setenv("SHINOBI_CONFIG", str(bad))
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(cwd=tmp_path, environ={})


def test_a_config_path_that_is_a_directory_says_so_and_to_name_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "Fix its permissions" sent an admin to chmod a directory, which no mode makes a file."""
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path))  # a directory: EISDIR, even for root
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    said = str(info.value)
    assert (
        said
        == f"{tmp_path} is a directory, not a configuration file; name a file in SHINOBI_CONFIG"
    )


def test_a_config_path_that_cannot_be_read_names_its_permissions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads a file of any mode")
    user = tmp_path / "user.toml"
    user.write_text("[execution]\n")
    user.chmod(0)
    monkeypatch.setenv("SHINOBI_CONFIG", str(user))
    with pytest.raises(ConfigError, match=r"\(Permission denied\); fix its permissions, or point"):
        load_config(cwd=tmp_path, environ={})


@pytest.mark.parametrize("named", ["fifo", "/dev/zero"])
def test_a_config_path_that_is_a_fifo_or_a_device_is_refused_without_reading_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: str
) -> None:
    """A FIFO with no writer hung every command; /dev/zero was read until memory ran out."""
    path = tmp_path / named
    if named == "fifo":
        os.mkfifo(path)
    monkeypatch.setenv("SHINOBI_CONFIG", str(path))
    kind = "a named pipe (FIFO)" if named == "fifo" else "a device"
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    assert str(info.value) == (
        f"{path} is {kind}, not a configuration file; name a file in SHINOBI_CONFIG"
    )


def test_dev_null_as_the_configuration_is_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", os.devnull)
    assert load_config(cwd=tmp_path, environ={}).execution.max_workers >= 1


def test_a_project_file_that_cannot_be_read_names_its_own_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").mkdir()  # unreadable as a file, even for root
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    assert "is a directory, not a configuration file; move the directory aside" in str(info.value)
    assert "run ninja from another directory" in str(info.value)
    assert "SHINOBI_CONFIG" not in str(info.value)  # it would not help: the project file stays


def test_unknown_keys_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(ConfigError, match="max_wrokers"):
        load_config({"execution.max_wrokers": 2}, cwd=tmp_path, environ={})


@pytest.mark.parametrize("user_file", ["none.toml", "empty.toml", os.devnull])
def test_no_config_file_means_no_toml_parser(tmp_path: Path, user_file: str) -> None:
    """No file, an empty one and ``SHINOBI_CONFIG=/dev/null`` are all "no settings"."""
    (tmp_path / "empty.toml").write_bytes(b"")
    (tmp_path / "shinobi.toml").write_bytes(b"")
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from shinobi.config import load_config\n"
        f"config = load_config(cwd=Path({str(tmp_path)!r}), environ={{}})\n"
        "print(config.execution.max_workers, 'tomllib' in sys.modules)\n"
    )
    env = {**os.environ, "SHINOBI_CONFIG": str(tmp_path / user_file)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "False"]


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[backend]\ndefualt = "docker"\n', "'backend.defualt' is not a setting"),
        ("[backend.nativ]\nx = 1\n", "[backend.nativ] is not the table of a backend"),
    ],
)
def test_a_misspelt_backend_key_or_table_is_refused_with_a_suggestion(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, said: str
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text(toml)
    with pytest.raises(ConfigError, match="did you mean") as info:
        load_config(cwd=tmp_path, environ={})
    assert said in str(info.value)


def test_the_table_of_a_plugin_not_installed_here_is_left_for_doctor_to_warn_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A config file shared by environments, one of which has a site plugin: every
    command of the others (runs, clean, a native run) was refused for its table."""
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text("[backend.sitecluster]\nqueue = 'long'\n")
    assert load_config(cwd=tmp_path, environ={}).backend.default == "native"
    env = {**os.environ, "SHINOBI_CONFIG": os.devnull}
    doctor = subprocess.run(
        [sys.executable, "-m", "shinobi.cli", "doctor"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (
        "warning: [backend.sitecluster] configures no installed backend: install the plugin"
        " that provides 'sitecluster' here, or remove the table"
    ) in doctor.stdout, doctor.stdout + doctor.stderr


def test_a_variable_with_a_misspelt_backend_names_the_one_meant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read as a global key, and got the advice to use a table the user had meant."""
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={"SHINOBI_BACKEND_DOKCER_NETWORK": "none"})
    said = "no backend named 'dokcer' is installed: did you mean SHINOBI_BACKEND_DOCKER_NETWORK?"
    assert said in str(info.value)


def test_a_backend_table_key_the_backend_does_not_read_is_refused_when_it_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi.session import Session

    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text("[backend.native]\ngrace = 3\n")
    config = load_config(cwd=tmp_path, environ={})  # a table may hold what its plugin reads
    with pytest.raises(ConfigError, match=r"'backend.native.grace' .* not a setting of the native"):
        Session(config=config, cwd=str(tmp_path)).backend("native")


def test_a_variable_reaches_a_backend_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    config = load_config(
        cwd=tmp_path,
        environ={
            "SHINOBI_BACKEND_DOCKER_NETWORK": "none",
            "SHINOBI_BACKEND_VENV_HOST_COMMANDS": '["sh"]',
        },
    )
    assert config.backend_settings("docker")["network"] == "none"
    assert config.backend.venv_host_commands == ["sh"]


def test_a_memory_that_is_not_a_size_is_refused_with_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(
        ConfigError,
        match=r"'execution.memory' \(from environment variable SHINOBI_EXECUTION_MEMORY\).*size",
    ):
        load_config(cwd=tmp_path, environ={"SHINOBI_EXECUTION_MEMORY": "lots"})


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("MEMORY", "0", "more than 0 bytes"),
        ("MEMORY", "0GiB", "more than 0 bytes"),
        ("CPUS", "inf", "finite number"),
        ("CPUS", "nan", "finite number"),
    ],
)
def test_a_budget_that_could_hold_nothing_or_everything_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, value: str, said: str
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(ConfigError, match=said):
        load_config(cwd=tmp_path, environ={f"SHINOBI_EXECUTION_{key}": value})


def test_a_misspelt_section_is_blamed_on_its_file_with_the_nearest_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text("[executon]\nmax_workers = 2\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    said = str(info.value)
    assert "'executon' (from project file" in said and "did you mean 'execution'?" in said


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("max_workers = 2", "'execution.max_workers'"),
        ("workdir = '/tmp'", "'execution.workdir'"),
        ("cache_dir = 'x'", "'cache.dir'"),  # was "did you mean 'cache'?", a section
        ("enabled = true", "'provenance.enabled' or 'cache.enabled'"),
        ("execution_maxworkers = 3", "'execution.max_workers'"),  # was 'execution'
        ("cache_enable = false", "'cache.enabled'"),  # was no suggestion
    ],
)
def test_a_sections_key_written_at_the_top_names_its_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str, meant: str
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text(written + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    assert str(info.value).endswith(f"not a setting; did you mean {meant}?")


def test_a_variable_for_a_text_setting_is_taken_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    config = load_config(
        cwd=tmp_path, environ={"SHINOBI_CACHE_DIR": "123", "SHINOBI_EXECUTION_MAX_WORKERS": "3"}
    )
    assert config.cache.dir == "123" and config.execution.max_workers == 3


def test_a_variable_with_a_misspelt_section_is_refused_and_others_are_not(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="did you mean SHINOBI_EXECUTION_MAX_WORKERS"):
        load_config(cwd=tmp_path, environ={"SHINOBI_EXECUTON_MAX_WORKERS": "4"})
    with pytest.raises(ConfigError, match="no configuration section 'cach'"):
        load_config(cwd=tmp_path, environ={"SHINOBI_CACH_DIR": "/tmp/x"})
    with pytest.raises(ConfigError) as caught:  # the section itself, with no key
        load_config(cwd=tmp_path, environ={"SHINOBI_CACHE": "0"})
    said = str(caught.value)
    assert "SHINOBI_CACHE names the section 'cache' but no key in it" in said
    assert "SHINOBI_CACHE_ENABLED" in said and "did you mean" not in said
    unrelated = {"SHINOBI_DEBUG": "1", "SHINOBI_TESTBED_UP": "0", "SHINOBI_TEARDOWN_TAG": "x"}
    assert load_config(cwd=tmp_path, environ=unrelated).execution.max_workers == 1


def test_a_configured_workdir_that_does_not_exist_is_refused_not_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no" / "such"
    (tmp_path / "user.toml").write_text(f'[execution]\nworkdir = "{missing}"\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "user.toml"))
    (tmp_path / "r.py").write_text(
        "from shinobi.steps import Cab, Recipe\n"
        "r = Recipe('r')\nr.add_step('t', Cab('t', ['/bin/true']))\n"
    )
    for args in (["run", "r.py:r"], ["run", "r.py:r", "--dryrun"], ["runs"]):
        proc = subprocess.run(
            [sys.executable, "-m", "shinobi.cli", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 2
        assert proc.stderr.startswith("ninja: error: execution.workdir is ")
        assert "which does not exist" in proc.stderr
    assert not (tmp_path / "no").exists()


def test_config_show_gives_the_values_a_run_uses_where_the_setting_leaves_it_to_ninja(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi.resources import detect_cpus

    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("SHINOBI_EXECUTION_MEMORY", "2GiB")
    monkeypatch.delenv("SHINOBI_CACHE_DIR", raising=False)
    proc = subprocess.run(
        [sys.executable, "-m", "shinobi.cli", "config", "show", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    rows = {row["key"]: row for row in json.loads(proc.stdout)}
    cpus = rows["execution.cpus"]
    assert cpus["value"] == detect_cpus() and cpus["source"].startswith("detected")
    assert rows["execution.memory"]["value"] == "2GiB"  # given: shown as given
    assert rows["cache.dir"]["value"].endswith("steps")
    assert rows["cache.dir"]["source"] == "default location"


def test_an_unknown_default_backend_says_which_setting_and_file_named_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shinobi.errors import BackendNotFound
    from shinobi.runner import prepare
    from shinobi.steps import Recipe

    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text('[backend]\ndefault = "nosuch"\n')
    config = load_config(cwd=tmp_path, environ={})
    with pytest.raises(BackendNotFound, match=r"backend.default, from project file .*shinobi.toml"):
        prepare(Recipe("r", steps=[]), None, config)


def test_an_unknown_backend_a_step_names_says_which_step(tmp_path: Path) -> None:
    from shinobi.errors import BackendNotFound
    from shinobi.runner import prepare
    from shinobi.steps import Cab, Recipe

    inner = Recipe("inner")
    inner.add_step("deep", Cab("c", "true"), backend="dockr")
    recipe = Recipe("r")
    recipe.add_step("fine", Cab("c", "true"))
    recipe.add_step("outer", inner)
    config = load_config({"cache.enabled": False}, cwd=tmp_path, environ={})
    with pytest.raises(BackendNotFound, match=r"^step 'outer.deep': unknown backend 'dockr'"):
        prepare(recipe, None, config)
    with pytest.raises(BackendNotFound, match=r"^unknown backend 'natve'"):  # the run's own
        prepare(Recipe("r", steps=[]), "natve", config)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        # a list in a variable that is not JSON: say how to write one
        ("SHINOBI_BACKEND_VENV_HOST_COMMANDS", "sh", r"Input should be a valid list; .*as JSON"),
        # empty would quietly mean the default location
        ("SHINOBI_CACHE_DIR", "", r"is empty; name a directory"),
        # an endless grace would leave stopping a stuck step to a second signal
        ("SHINOBI_EXECUTION_GRACE_PERIOD", "1e309", r"Input should be a finite number"),
    ],
    ids=["list-not-json", "empty-cache-dir", "endless-grace"],
)
def test_a_bad_variable_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, said: str
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    with pytest.raises(ConfigError, match=rf"\(from environment variable {variable}\): {said}"):
        load_config(cwd=tmp_path, environ={variable: value})


def test_a_sections_key_under_another_section_names_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text("[backend]\nmax_workers = 2\n")
    with pytest.raises(ConfigError, match=r"did you mean 'execution.max_workers'\?"):
        load_config(cwd=tmp_path, environ={})


def test_a_plugins_word_on_its_setting_is_told_where_the_setting_was_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin sees merged values: its "[backend.slurm] poll_max must be ..." named no
    file, as configuration.md promises every bad value does."""
    from shinobi.config import said_where

    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\npoll_max = "fast"\n')
    load_config(cwd=tmp_path, environ={"SHINOBI_BACKEND_SLURM_SBATCH_OPTS": "[1"})
    said = said_where("[backend.slurm] poll_max must be a number of seconds, not 'fast'")
    assert said.endswith(f"(poll_max is set in project file {tmp_path / 'shinobi.toml'})")
    said = said_where("[backend.slurm] sbatch_opts: '[1' is not an option")
    assert said.endswith(
        "(sbatch_opts is set in environment variable SHINOBI_BACKEND_SLURM_SBATCH_OPTS)"
    )
    assert said_where("no key here") == "no key here"


def test_a_plugins_word_on_a_table_setting_is_told_every_layer_that_filled_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table's keys are recorded one by one (``sbatch_opts.mail-type``): looked up
    by the table's own name, a bad table-form sbatch_opts named no file at all."""
    from shinobi.config import said_where

    (tmp_path / "site.toml").write_text('[backend.slurm.sbatch_opts]\nqos = "low"\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "site.toml"))
    (tmp_path / "shinobi.toml").write_text('[backend.slurm.sbatch_opts]\nmail-type = ["END"]\n')
    load_config(cwd=tmp_path, environ={})
    said = said_where("[backend.slurm] sbatch_opts: mail-type must be one value, not ['END']")
    assert said.endswith(
        f"(sbatch_opts is set in user file {tmp_path / 'site.toml'}"
        f" and project file {tmp_path / 'shinobi.toml'})"
    )


@pytest.mark.parametrize(
    "args",
    [["run", "r.py:r"], ["compile", "r.py:r"], ["cache", "ls"], ["config", "show"]],
    ids=lambda args: " ".join(args),
)
def test_every_command_that_reads_the_configuration_warns_of_a_missing_shinobi_config(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    """Only ``config show`` said so: a run on a host where the site file was not
    there went without its partition and its cache, unremarked."""
    from cli_in_process import in_process

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "typo.toml"))
    monkeypatch.setenv("SHINOBI_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "r.py").write_text(
        "from shinobi.steps import Cab, Recipe\n"
        "r = Recipe('r')\nr.add_step('t', Cab('t', ['/bin/true']))\n"
    )
    from shinobi.backends.registry import OFFLOAD, available

    code, _, err = in_process(capsys, *args)
    # core's own session has no engine to compile for: the warning comes first all the same
    no_engine = args[0] == "compile" and "slurm" not in available(OFFLOAD)
    assert code == (2 if no_engine else 0), err
    assert (
        f"ninja: warning: SHINOBI_CONFIG names {tmp_path / 'typo.toml'}, which does not exist:"
        " its settings are not applied; fix the path, or unset SHINOBI_CONFIG\n"
    ) in err


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["runs"], 0),
        (["clean", "--runs"], 0),
        (["logs", "nothing"], 2),
        (["status", "nothing"], 2),
        (["cancel", "nothing"], 2),
        (["report", "nothing"], 2),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)
def test_the_commands_that_find_a_workspace_warn_of_a_missing_shinobi_config(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    code: int,
) -> None:
    """They read execution.workdir from it (and status and cancel the engine's
    settings): without the site file, ``ninja runs`` listed another folder's runs."""
    from cli_in_process import in_process

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "typo.toml"))
    said, _, err = in_process(capsys, *args)
    assert said == code, err
    assert err.startswith(f"ninja: warning: SHINOBI_CONFIG names {tmp_path / 'typo.toml'}")
    assert err.count("SHINOBI_CONFIG names") == 1, err  # said once, however often it is read


def test_doctor_counts_a_missing_shinobi_config_as_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from cli_in_process import in_process

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "typo.toml"))
    code, out, _ = in_process(capsys, "doctor", "--json")
    assert code == 2
    problems = json.loads(out)["config"]["problems"]
    assert [p for p in problems if p.startswith(f"SHINOBI_CONFIG names {tmp_path}")]


@pytest.mark.parametrize("linked", ["site.toml", "mnt/shinobi/site.toml"])
def test_a_config_file_that_is_a_dangling_link_is_unreadable_not_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    """A shared site file on an NFS path not mounted here was read as "no file":
    every setting quietly lost, and nothing said."""
    (tmp_path / "link.toml").symlink_to("/srv/unmounted/site.toml")
    (tmp_path / "mnt").symlink_to("/srv/unmounted")
    user = tmp_path / "link.toml" if linked == "site.toml" else tmp_path / linked
    monkeypatch.setenv("SHINOBI_CONFIG", str(user))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    link = "" if linked == "site.toml" else f"{tmp_path / 'mnt'}: "
    target = "/srv/unmounted/site.toml" if linked == "site.toml" else "/srv/unmounted"
    assert str(info.value) == (
        f"{user}: cannot read this configuration file: {link}it is a symbolic link to {target},"
        " which does not exist: mount or create that, or remove the link;"
        " or point SHINOBI_CONFIG at a file you can read"
    )


@pytest.mark.parametrize(
    ("key", "section"),
    [("dir", "cache"), ("workdir", "execution"), ("venv", "backend")],
)
def test_a_path_setting_expands_its_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, section: str
) -> None:
    """``dir = "$SCRATCH/shinobi-cache"`` made a directory named ``$SCRATCH`` in the project."""
    monkeypatch.setenv("SCRATCH", "/scratch/me")
    (tmp_path / "shinobi.toml").write_text(f'[{section}]\n{key} = "${{SCRATCH}}/x"\n')
    config = load_config(cwd=tmp_path, environ={})
    assert getattr(getattr(config, section), key) == "/scratch/me/x"


@pytest.mark.parametrize("value", ["$SCRATCH/x", "${SCRATCH}/x", "/a/$EMPTY/x"])
def test_a_path_setting_with_a_variable_not_set_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.delenv("SCRATCH", raising=False)
    monkeypatch.setenv("EMPTY", "")  # as empty as unset: "$EMPTY/x" would be "/x"
    (tmp_path / "site.toml").write_text(f'[cache]\ndir = "{value}"\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(tmp_path / "site.toml"))
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path, environ={})
    name = "EMPTY" if "EMPTY" in value else "SCRATCH"
    said = "is empty" if name == "EMPTY" else "is not set"
    assert str(info.value) == (
        f"configuration key 'cache.dir' (from user file {tmp_path / 'site.toml'}):"
        f" ${name} {said} here; set it, or write the path in full"
    )


def test_a_relative_cache_dir_in_a_file_is_taken_from_the_files_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the user file, ``dir = "cache"`` was a cache in every project directory."""
    site, project = tmp_path / "site", tmp_path / "project"
    site.mkdir()
    project.mkdir()
    (site / "config.toml").write_text('[cache]\ndir = "cache"\n')
    monkeypatch.setenv("SHINOBI_CONFIG", str(site / "config.toml"))
    assert load_config(cwd=project, environ={}).cache_dir() == site / "cache"
    (project / "shinobi.toml").write_text('[cache]\ndir = "here"\n')
    assert load_config(cwd=project, environ={}).cache_dir() == project / "here"
    monkeypatch.chdir(project)  # a variable's is the current directory's, as a flag's
    environ = {"SHINOBI_CACHE_DIR": "there"}
    assert load_config(cwd=project, environ=environ).cache_dir() == Path("there")


def test_no_home_to_be_found_is_a_configuration_error_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HOME unset and no passwd entry (``docker run --user 12345``, ``env -i``):
    platformdirs raised a RuntimeError every command called a bug of ninja's."""
    import platformdirs

    from shinobi.config import user_config_path, user_dir

    def no_home(*args: object, **kwargs: object) -> str:
        raise RuntimeError("could not determine the home directory")

    monkeypatch.delenv("SHINOBI_CONFIG", raising=False)
    monkeypatch.setattr(platformdirs, "user_config_dir", no_home)
    monkeypatch.setattr(platformdirs, "user_state_dir", no_home)
    with pytest.raises(ConfigError, match=r"set HOME \(or XDG_CONFIG_HOME\), or name a"):
        user_config_path()
    with pytest.raises(ConfigError, match="XDG_STATE_HOME"):
        user_dir("state", "set XDG_STATE_HOME to a directory of yours")


def test_a_home_that_is_no_directory_holds_no_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HOME=/dev/null (service and CI accounts): every command refused "cannot read
    this configuration file (Not a directory); fix its permissions"."""
    monkeypatch.delenv("SHINOBI_CONFIG", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", os.devnull)
    monkeypatch.chdir(tmp_path)
    assert load_config().execution.max_workers >= 1


def test_a_switch_of_core_s_own_says_the_words_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pydantic's "Input should be a valid boolean" named no word it takes, where a
    backend's switches said them."""
    monkeypatch.setenv("SHINOBI_CACHE_ENABLED", "maybe")
    with pytest.raises(ConfigError) as refused:
        load_config(cwd=tmp_path)
    assert str(refused.value) == (
        "configuration key 'cache.enabled' (from environment variable SHINOBI_CACHE_ENABLED):"
        " must be true or false (or yes/no, on/off, 1/0), not 'maybe'"
    )


def test_a_path_setting_s_tilde_is_expanded_where_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``config show`` printed ``~/c`` where every command used the home's ``c``."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SHINOBI_CACHE_DIR", "~/c")
    monkeypatch.setenv("SHINOBI_EXECUTION_WORKDIR", "~")
    config = load_config(cwd=tmp_path)
    assert config.cache.dir == str(tmp_path / "c")
    assert config.execution.workdir == str(tmp_path)


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_shinobi_config_is_said_to_read_the_users_own_file(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SHINOBI_CONFIG=$SITE_CONFIG`` with the site variable unset read the user's
    own file in silence."""
    from shinobi.config import named_file_missing, user_config_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("SHINOBI_CONFIG", value)
    assert user_config_path() == tmp_path / "shinobi" / "config.toml"
    said = named_file_missing()
    assert said == (
        f"SHINOBI_CONFIG is set but empty (an unset variable in a job script?), so"
        f" {tmp_path / 'shinobi' / 'config.toml'} is read in its place; name a file, or unset it"
    )
