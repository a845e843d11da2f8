"""The memory-stall watchdog's judgement, its reading of cgroups and /proc, and its setting.

The samples are shaped on a real stall (apptainer, cgroup v1, 64 MiB): usage
at the limit, the fail count up 35,000 a second, the I/O counters frozen and
one user tick in twenty seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shinobi_containers.errors import SettingsInvalid
from shinobi_containers.settings import ContainerSettings
from shinobi_containers.stall import (
    MemoryCgroup,
    Sample,
    StallJudge,
    memory_cgroup_of,
)

LIMIT = 64 << 20


def stalled(seconds: int, **change: object) -> list[Sample]:
    """One sample a second of a stall, with ``change`` applied from the second sample on."""
    samples = []
    for second in range(seconds + 1):
        fields: dict[str, object] = {
            "at": float(second),
            "usage": LIMIT,
            "limit": LIMIT,
            "failures": 90_000 + 35_000 * second,
            "pids": frozenset({10, 11, 12}),
            "user_ticks": 28,
            "io": 200_000_000,
        }
        if second:
            for key, value in change.items():
                fields[key] = value(second) if callable(value) else value
        samples.append(Sample(**fields))  # type: ignore[arg-type]
    return samples


def verdicts(samples: list[Sample], window: float = 10) -> list[bool]:
    judge = StallJudge(window)
    return [judge.feed(sample) for sample in samples]


def test_a_step_stuck_at_its_limit_is_judged_stalled_once_the_window_has_passed() -> None:
    said = verdicts(stalled(12))
    assert said.index(True) == 10
    assert not any(said[:10])


def test_a_tick_of_user_time_now_and_then_does_not_hide_a_stall() -> None:
    assert verdicts(stalled(12, user_ticks=lambda s: 28 + s // 10))[10]


@pytest.mark.parametrize(
    "change",
    [
        {"io": lambda s: 200_000_000 + 4096 * s},  # streaming through a small page cache
        {"user_ticks": lambda s: 28 + 30 * s},  # computing in memory it already has
        {"failures": 90_000},  # at the limit, but asking for nothing more
        {"usage": LIMIT - (8 << 20)},  # below the limit
        {"io": None},  # a process's counters cannot be read: nothing is judged
        {"pids": lambda s: frozenset({10, 11, 12 + s})},  # processes come and go
        {"limit": None},  # no limit at all
    ],
    ids=["io", "user", "no-failures", "below", "unreadable", "pids", "unlimited"],
)
def test_a_step_that_shows_any_sign_of_life_is_never_judged_stalled(
    change: dict[str, object],
) -> None:
    assert not any(verdicts(stalled(30, **change)))


def test_one_sign_of_life_starts_the_window_again() -> None:
    samples = stalled(20)
    lively = Sample(
        **{**{f: getattr(samples[8], f) for f in Sample.__slots__}, "io": 1}  # type: ignore[arg-type]
    )
    samples[8] = lively
    said = verdicts(samples)
    assert said.index(True) == 19  # ten seconds after the sample after the change


# -- reading cgroups and /proc ----------------------------------------------------
def fake_proc(tmp_path: Path, mountinfo: str, cgroups: dict[int, str]) -> Path:
    """A /proc with each pid's ``cgroup`` file, and ``self/mountinfo``."""
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "mountinfo").write_text(mountinfo)
    for pid, cgroup in cgroups.items():
        (proc / str(pid)).mkdir()
        (proc / str(pid) / "cgroup").write_text(cgroup)
    return proc


HYBRID = (
    "30 23 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:4 - cgroup2 cgroup2 rw\n"
    "35 23 0:31 / /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory\n"
)
UNIFIED = "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n"


def test_on_a_hybrid_host_the_v1_memory_hierarchy_is_the_one_that_limits(tmp_path: Path) -> None:
    proc = fake_proc(
        tmp_path, HYBRID, {7: "12:memory:/apptainer/7\n3:cpu,cpuacct:/\n0::/user.slice\n"}
    )
    assert memory_cgroup_of(7, proc) == MemoryCgroup(Path("/sys/fs/cgroup/memory/apptainer/7"), 1)


def test_on_a_unified_host_the_v2_cgroup_is_read(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, UNIFIED, {7: "0::/system.slice/apptainer-7.scope\n"})
    assert memory_cgroup_of(7, proc) == MemoryCgroup(
        Path("/sys/fs/cgroup/system.slice/apptainer-7.scope"), 2
    )


def test_a_process_that_is_gone_has_no_cgroup(tmp_path: Path) -> None:
    assert memory_cgroup_of(99, fake_proc(tmp_path, UNIFIED, {})) is None


def cgroup_dir(path: Path, version: int, files: dict[str, str]) -> MemoryCgroup:
    for name, text in files.items():
        (path / name).write_text(text)
    return MemoryCgroup(path, version)


def test_v1_counters_are_read_and_its_huge_number_means_no_limit(tmp_path: Path) -> None:
    cgroup = cgroup_dir(
        tmp_path,
        1,
        {
            "memory.usage_in_bytes": "67108864\n",
            "memory.limit_in_bytes": "9223372036854771712\n",
            "memory.failcnt": "145437\n",
            "cgroup.procs": "10\n11\n",
        },
    )
    assert (cgroup.usage(), cgroup.limit(), cgroup.failures(), cgroup.pids()) == (
        LIMIT,
        None,
        145437,
        frozenset({10, 11}),
    )


def test_v2_counters_are_read_from_current_max_and_the_max_event(tmp_path: Path) -> None:
    cgroup = cgroup_dir(
        tmp_path,
        2,
        {
            "memory.current": "67108864\n",
            "memory.max": "67108864\n",
            "memory.events": "low 0\nhigh 0\nmax 812\noom 0\noom_kill 0\n",
            "cgroup.procs": "10\n",
        },
    )
    assert (cgroup.usage(), cgroup.limit(), cgroup.failures()) == (LIMIT, LIMIT, 812)
    (tmp_path / "memory.max").write_text("max\n")
    assert cgroup.limit() is None


# -- the setting -----------------------------------------------------------------
def test_the_watchdog_waits_thirty_seconds_unless_told_otherwise() -> None:
    assert ContainerSettings.from_mapping("apptainer", {}).memory_stall_timeout == 30
    told = ContainerSettings.from_mapping("apptainer", {"memory_stall_timeout": 0})
    assert told.memory_stall_timeout == 0


@pytest.mark.parametrize("value", [-1, "30", True, None])
def test_a_stall_timeout_that_is_not_seconds_is_refused_naming_the_key(value: object) -> None:
    with pytest.raises(SettingsInvalid, match=r"backend\.apptainer\.memory_stall_timeout"):
        ContainerSettings.from_mapping("apptainer", {"memory_stall_timeout": value})
