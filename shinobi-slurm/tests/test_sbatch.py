"""#SBATCH options: a footprint rounded up, configured options winning, bad ones refused."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, Ninja

from shinobi.errors import ConfigError, UsageError
from shinobi.resources import Resources
from shinobi_slurm.backend import poll_tuning
from shinobi_slurm.commands import SlurmCommands
from shinobi_slurm.sbatch import (
    Option,
    batch_script,
    command_line,
    command_lines,
    merge_options,
    overridden_by,
    parse_sbatch_opts,
    resource_options,
)


def args(options: list[Option]) -> list[str]:
    return [o.argument() for o in options]


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        (Resources(cpus=2), ["--cpus-per-task=2"]),
        (Resources(cpus=1.5), ["--cpus-per-task=2"]),
        (Resources(cpus=0.1), ["--cpus-per-task=1"]),
        (Resources(memory="64MiB"), ["--mem=64M"]),
        (Resources(memory="1GB"), ["--mem=954M"]),
        (Resources(memory="1.5MiB"), ["--mem=2M"]),
        (Resources(cpus="all", memory="2GiB"), ["--exclusive", "--mem=2048M"]),
        (None, []),
    ],
)
def test_resources_round_up(resources: Resources | None, expected: list[str]) -> None:
    assert args(resource_options(resources)) == expected


def test_sbatch_opts_in_every_spelling() -> None:
    assert args(parse_sbatch_opts(["--partition=debug", "-t 10", "--exclusive"])) == [
        "--partition=debug",
        "--time=10",
        "--exclusive",
    ]
    assert args(parse_sbatch_opts("-p debug --mem 2G")) == ["--partition=debug", "--mem=2G"]
    assert args(parse_sbatch_opts({"account": "astro", "exclusive": True, "qos": None})) == [
        "--account=astro",
        "--exclusive",
    ]


def test_a_table_value_that_is_no_one_value_is_refused() -> None:
    """It was written as ``#SBATCH --mem="['1G']"``, a Python list's repr."""
    with pytest.raises(ConfigError, match=r"sbatch_opts: mem must be one value .* not \['1G'\]"):
        parse_sbatch_opts({"mem": ["1G"]})
    assert args(parse_sbatch_opts({"nodes": 2})) == ["--nodes=2"]


def test_configured_options_win_over_derived_ones() -> None:
    derived = resource_options(Resources(cpus=2, memory="1GiB"))
    merged = merge_options(derived, parse_sbatch_opts(["--mem=4G"]))
    assert args(merged) == ["--cpus-per-task=2", "--mem=4G"]


def test_mem_per_cpu_replaces_a_derived_mem() -> None:
    derived = resource_options(Resources(cpus=2, memory="1GiB"))
    merged = merge_options(derived, parse_sbatch_opts(["--mem-per-cpu=1G"]))
    assert args(merged) == ["--cpus-per-task=2", "--mem-per-cpu=1G"]


def test_what_configured_options_override_can_be_worked_out_once() -> None:
    configured = parse_sbatch_opts(["--mem-per-cpu=1G", "--time=5"])
    overridden = overridden_by(configured)
    assert overridden == {"mem-per-cpu", "mem", "time"}
    derived = [*resource_options(Resources(cpus=2, memory="1GiB")), Option("time", "9")]
    assert merge_options(derived, configured, overridden) == merge_options(derived, configured)


def test_an_unknown_short_option_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match="long form"):
        parse_sbatch_opts(["-Z 3"])


def test_arguments_are_quoted_for_the_shell() -> None:
    nasty = "it's $(touch /tmp/pwned) `x` ; &"
    line = command_line(["/bin/echo", nasty])
    assert line.startswith("/bin/echo 'it'\"'\"'s $(touch /tmp/pwned) `x` ; &'; rc=$?; ")


@pytest.mark.parametrize(
    ("payload", "returncode"),
    [
        ("exit 3", 3),  # an exit code stays an exit code
        ("exit 137", -signal.SIGKILL),  # a docker client whose container was SIGKILLed
        ("kill -SEGV $$", -signal.SIGSEGV),  # a tool killed by a signal
        ("exit 147", 147),  # 128 + SIGSTOP: relayed, it would suspend the job for ever
        ("exit 156", 156),  # 128 + SIGWINCH: relayed, it would be ignored
        ("exit 192", -64),  # the last real-time signal
        ("true", 0),
    ],
)
def test_the_job_ends_by_the_signal_its_payload_died_of(payload: str, returncode: int) -> None:
    """So Slurm records a signal (0:9), not an exit code of 9 (what exit 137 shows as)."""
    script = "\n".join(command_lines(["/bin/sh", "-c", payload]))
    assert subprocess.run(["bash", "-c", script], check=False).returncode == returncode


def test_a_script_has_directives_then_comments_then_body() -> None:
    text = batch_script(
        [Option("job-name", "x"), Option("comment", "a b")],
        ["exec /bin/true"],
        comments=["why"],
    )
    assert text.splitlines() == [
        "#!/bin/bash",
        "#SBATCH --job-name=x",
        '#SBATCH --comment="a b"',
        "# why",
        "exec /bin/true",
    ]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (["--account o'brien"], "balance its quotes"),  # OPTION VALUE: the value is split
        ("--comment 'nightly", "balance its quotes"),
        (5, "must be a list of options"),
    ],
)
def test_a_malformed_sbatch_opts_is_a_configuration_error(value: object, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        parse_sbatch_opts(value)


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"poll_max": "fast"}, "poll_max must be a number of seconds, not 'fast'"),
        ({"poll_min": -1}, "poll_min must not be negative"),
        ({"outage_limit": True}, "outage_limit must be a number of seconds"),
        ({"poll_min": 1e12, "poll_max": 1e13}, r"poll_min must be at most 604800 s \(a week\)"),
    ],
)
def test_polling_settings_that_are_not_seconds_are_refused(
    settings: dict[str, object], said: str
) -> None:
    with pytest.raises(ConfigError, match=said):
        poll_tuning(settings)


def test_a_command_prefix_with_an_unbalanced_quote_is_refused() -> None:
    with pytest.raises(ConfigError, match="command_prefix: cannot split"):
        SlurmCommands.from_settings({"command_prefix": 'ssh "login'})


@pytest.mark.parametrize(
    "option",
    [
        Option("output", "/tmp/nl\nx/logs/a.out"),
        Option("comment", "a\rb"),
        Option("job-name", "shinobi-1\n2"),
        Option("exclusive\nrm -rf ~"),
    ],
)
def test_a_directive_with_a_line_break_is_refused_not_written(option: Option) -> None:
    with pytest.raises(UsageError, match="holds a line break, which an #SBATCH line cannot hold"):
        batch_script([Option("partition", "debug"), option], ["true"])
    with pytest.raises(UsageError) as info:
        batch_script([option], ["true"])
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "value", [{"reservation": "one\ntwo"}, ["--reservation='one\ntwo'"], "--reservation='/a\rb'"]
)
def test_configured_options_with_a_line_break_are_a_configuration_error(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^\[backend.slurm\] sbatch_opts: .* holds a line break"):
        parse_sbatch_opts(value)


def test_a_comment_with_line_breaks_stays_comments() -> None:
    text = batch_script([], ["true"], comments=["note: a\nrm -rf ~\r\nb", ""])
    assert text == "#!/bin/bash\n# note: a\n# rm -rf ~\n# b\n#\ntrue\n"


def test_compile_refuses_a_workdir_or_cwd_with_a_line_break(ninja: Ninja, tmp_path: Path) -> None:
    broken = tmp_path / "nl\nx"
    broken.mkdir()
    target = f"{EXAMPLES}/offload_demo.py:pipe"
    for args, cwd, said in (
        (["--workdir", str(broken)], tmp_path, "the workdir, "),
        (["--workdir", str(tmp_path)], broken, "the directory the jobs run in, "),
    ):
        done = ninja("compile", target, "--engine", "slurm", *args, cwd=cwd)
        assert done.returncode == 2, done.stdout
        assert done.stdout == "" and done.stderr.count("\n") == 1
        assert said in done.stderr and "holds a line break" in done.stderr


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (["--wait"], "--wait"),
        (["-W"], "--wait"),  # was "unknown short option"
        (["--test-only"], "--test-only"),  # sbatch then submits nothing and names no job
    ],
)
def test_configured_options_that_change_what_submitting_is_are_refused(
    value: object, named: str
) -> None:
    """Not "set by ninja on every job": ninja sets neither; they are refused for
    what they would do."""
    with pytest.raises(ConfigError, match=rf"sbatch_opts: {named} cannot be used with ninja"):
        parse_sbatch_opts(value)


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (["--dependency=afterok:1"], "--dependency"),
        (["--depend=afterok:1"], r"--depend \(--dependency\)"),
        (["-J", "mine"], "--job-name"),
        ({"output": "slurm-%j.out"}, "--output"),
        (["-e x.err"], "--error"),
        (["--array=0-1"], "--array"),
        (["--kill-on-invalid-dep=no"], "--kill-on-invalid-dep"),
        (["-D /tmp"], "--chdir"),
        (["--comment=mine"], "--comment"),
        (["--jo=other"], r"--jo \(--job-name\)"),  # sbatch's own abbreviations
        (["--com=x"], r"--com \(--comment\)"),
    ],
)
def test_configured_options_ninja_sets_itself_are_refused(value: object, named: str) -> None:
    """They would silently undo the order of the jobs, the logs ninja reads, or the
    name `scancel -n` finds them by."""
    with pytest.raises(ConfigError, match=rf"sbatch_opts: {named} is set by ninja on every job"):
        parse_sbatch_opts(value)
    assert [o.argument() for o in parse_sbatch_opts(["--hold", "-p debug"])] == [
        "--hold",
        "--partition=debug",
    ]
    assert [o.argument() for o in parse_sbatch_opts(["-H", "-x", "n1"])] == [
        "--hold",  # a flag: the word after it is not its value
        "--exclude=n1",
    ]
