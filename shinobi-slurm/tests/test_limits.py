"""A job Slurm stopped for its memory or time limit is reported with that limit.

"out of memory ... declare more memory" alone leaves the user guessing how
much the step had; the message now says (``its 64M of memory``, ``its time
limit of 00:01:00``), asked from sacct once, only for such a job.
"""

from __future__ import annotations

import pytest
from conftest import RECIPES, Ninja

from shinobi_slurm.commands import SlurmError
from shinobi_slurm.sacct import job_limits, parse_line
from shinobi_slurm.states import Limits, classify

TIMEOUT_RECIPE = """
from shinobi.steps import Cab, Recipe

nap = Cab("nap", ["/bin/sh", "-c", "echo napping; sleep 600"])
r = Recipe("r")
r.add_step("nap", nap)
"""


def _record(state: str, exit_text: str):  # type: ignore[no-untyped-def]
    record = parse_line(f"7|7|{state}|{exit_text}|2026-01-01T00:00:00|2026-01-01T00:01:00|None")
    assert record is not None
    return record


def test_out_of_memory_names_the_memory_it_had_and_the_fix() -> None:
    found = classify(_record("OUT_OF_MEMORY", "0:125"), Limits(memory="64M"))
    assert found.oom and found.message is not None
    assert "more than its 64M of memory (OUT_OF_MEMORY)" in found.message
    assert "Resources(memory=" in found.message


def test_timeout_names_the_time_limit_and_the_fix() -> None:
    found = classify(_record("TIMEOUT", "0:0"), Limits(time="00:01:00"))
    assert found.message is not None and found.returncode
    assert "ran past its time limit of 00:01:00 (TIMEOUT)" in found.message
    assert "--time" in found.message


def test_without_limits_the_messages_still_read() -> None:
    assert "more than its --mem" in (classify(_record("OUT_OF_MEMORY", "0:125")).message or "")
    assert "past its time limit (TIMEOUT)" in (classify(_record("TIMEOUT", "0:0")).message or "")


class Accounting:
    """sacct's answer, and scontrol's (None: it has forgotten the job)."""

    def __init__(self, sacct: str | None, scontrol: str | None = None) -> None:
        self.answers = {"sacct": sacct, "scontrol": scontrol}

    def run(self, tool: str, args: list[str]) -> str:
        answer = self.answers[tool]
        if answer is None:
            raise SlurmError(f"{tool} failed: away")
        return answer


@pytest.mark.parametrize(
    ("sacct", "scontrol", "limits"),
    [
        (None, "JobId=7 TimeLimit=00:01:00 MinMemoryNode=64M Command=/a b", ("64M", "00:01:00")),
        (None, "JobId=7 TimeLimit=UNLIMITED MinMemoryCPU=512M", ("512M per CPU", None)),
        ("64M|00:01:00\n", None, ("64M", "00:01:00")),
        ("512Mc|UNLIMITED\n", None, ("512M per CPU", None)),
        ("2Gn|Partition_Limit\n", None, ("2G", None)),
        ("16?|UNLIMITED\n", "JobId=7 TimeLimit=UNLIMITED", (None, None)),  # sacct right after
        ("", None, (None, None)),
        (None, None, (None, None)),
    ],
)
def test_the_limits_are_read_from_the_controller_or_sacct(
    sacct: str | None, scontrol: str | None, limits: tuple[str | None, str | None]
) -> None:
    assert job_limits(Accounting(sacct, scontrol), "7") == limits  # type: ignore[arg-type]


@pytest.mark.usefixtures("slurm")
def test_a_step_over_its_memory_names_the_limit(ninja: Ninja) -> None:
    done = ninja("run", f"{RECIPES}/failing.py:hog", "--backend", "slurm")
    assert done.returncode == 1
    assert "more than its 64M of memory (OUT_OF_MEMORY)" in done.stderr, done.stderr


@pytest.mark.usefixtures("slurm")
def test_a_step_past_its_time_limit_names_it(ninja: Ninja, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Slurm's limits are whole minutes: this test takes about 80 s."""
    (tmp_path / "nap.py").write_text(TIMEOUT_RECIPE)
    (tmp_path / "shinobi.toml").write_text('[backend.slurm]\nsbatch_opts = ["--time=1"]\n')
    done = ninja("run", "nap.py:r", "--backend", "slurm", timeout=240)
    assert done.returncode == 1
    assert "ran past its time limit of 00:01:00 (TIMEOUT)" in done.stderr, done.stderr
    assert "raise --time in [backend.slurm] sbatch_opts" in done.stderr
