"""Declared footprints: sizes exact to the byte, cpus, and what this process may use."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shinobi.config import load_config
from shinobi.resources import Budget, Resources, detect_cpus, detect_memory, parse_size
from shinobi.session import Session

GB, GiB = 1000**3, 1024**3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("200GB", 200 * 1000**3),
        ("200GiB", 200 * 1024**3),
        ("200G", 200 * 1000**3),
        ("200Gi", 200 * 1024**3),
        ("512M", 512 * 1000**2),
        ("512MB", 512 * 1000**2),
        ("512MiB", 512 * 1024**2),
        ("2T", 2 * 1000**4),
        ("2TB", 2 * 1000**4),
        ("2TiB", 2 * 1024**4),
        ("4KiB", 4096),
        ("4kb", 4000),
        ("1PiB", 1024**5),
        ("200 gib", 200 * 1024**3),
        (" 7B ", 7),
        ("4096", 4096),
        ("1.5GiB", 3 * 1024**3 // 2),
        ("0.1GB", 100_000_000),
        ("200.1GB", 200_100_000_000),
        ("1.0000000001KB", 1001),
        (".5KiB", 512),
        (4096, 4096),
        (1.5, 2),
    ],
)
def test_sizes_are_exact_to_the_byte(text: str | int | float, expected: int) -> None:
    assert parse_size(text) == expected


def test_si_and_iec_differ_by_exactly_the_ratio() -> None:
    assert parse_size("200GiB") - parse_size("200GB") == 200 * (GiB - GB)


@pytest.mark.parametrize(
    "bad",
    [
        "200XB",
        "GB",
        "",
        "-1GB",
        "1e9",
        "12 G B",
        "1,5GB",
        "\u0663GiB",
        True,
        -3,
        math.nan,
        math.inf,
    ],
)
def test_bad_sizes_are_rejected_with_an_example(bad: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_size(bad)  # type: ignore[arg-type]
    assert str(bad).strip() in str(info.value) or "negative" in str(info.value)


def test_resources_parse_memory_and_keep_cpus() -> None:
    declared = Resources(cpus=16, memory="200GiB")
    assert declared.cpus == 16.0 and declared.memory == 200 * GiB
    assert declared.declared
    assert declared.describe() == "cpus=16 mem=200GiB"
    assert declared.to_json() == {"cpus": 16.0, "memory": 200 * GiB}
    assert Resources(cpus=0.5).describe() == "cpus=0.5"
    assert Resources(memory="1GB").describe() == "mem=953.7MiB"


def test_all_cpus_is_a_declaration_not_a_blank() -> None:
    assert Resources(cpus="all").cpus == "all"
    assert Resources(cpus="ALL").cpus == "all"
    assert Resources(cpus="all").declared
    assert Resources(cpus="all").describe() == "cpus=all"


def test_nothing_declared_is_free() -> None:
    assert not Resources().declared
    assert Resources().describe() == "undeclared"


def test_resources_are_immutable_and_comparable() -> None:
    assert Resources(cpus=2, memory="1GiB") == Resources(cpus=2.0, memory=GiB)
    with pytest.raises(AttributeError):
        Resources().cpus = 3  # type: ignore[misc]


@pytest.mark.parametrize("cpus", [0, -1, math.nan, math.inf, True, "4", "most", [2]])
def test_bad_cpus_name_the_field(cpus: object) -> None:
    with pytest.raises(
        ValueError, match=r"Resources\(cpus=.*cpus must be a positive number or 'all'"
    ):
        Resources(cpus=cpus)  # type: ignore[arg-type]


def test_bad_memory_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"Resources\(memory='200XB'\): unknown size unit 'XB'"):
        Resources(memory="200XB")


# -- what this process may use --------------------------------------------------


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")


def _proc(tmp_path: Path, text: str) -> str:
    path = tmp_path / "cgroup"
    path.write_text(text)
    return str(path)


def test_a_v1_memory_limit_on_an_ancestor_binds(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    _tree(
        root,
        {
            "memory/jobs/memory.limit_in_bytes": str(3 * GiB),
            "memory/jobs/step/memory.limit_in_bytes": "9223372036854771712",
            "memory/memory.limit_in_bytes": "9223372036854771712",
        },
    )
    proc = _proc(tmp_path, "4:memory:/jobs/step\n1:cpu,cpuacct:/\n0::/\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\n")
    assert detect_memory(proc, str(root), str(meminfo)) == 3 * GiB


def test_without_limits_memory_is_the_machine(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    _tree(root, {"memory/memory.limit_in_bytes": "9223372036854771712", "memory.max": "max"})
    proc = _proc(tmp_path, "4:memory:/\n0::/\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       1000 kB\n")
    assert detect_memory(proc, str(root), str(meminfo)) == 1000 * 1024


def test_a_v2_cpu_quota_and_memory_max(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    _tree(
        root,
        {
            "user.slice/cpu.max": "max 100000",
            "user.slice/job/cpu.max": "150000 100000",
            "user.slice/job/memory.max": str(2 * GiB),
        },
    )
    proc = _proc(tmp_path, "0::/user.slice/job\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\n")
    assert detect_cpus(proc, str(root)) == min(1.5, len(os.sched_getaffinity(0)))
    assert detect_memory(proc, str(root), str(meminfo)) == 2 * GiB


def test_a_v2_limit_on_a_hybrid_host_is_read_under_unified(tmp_path: Path) -> None:
    """A hybrid host mounts the v1 controllers at the root and cgroup v2 at
    ``unified``; a job's limits set through v2 (systemd's, a scheduler's) live only
    there. Missed, the budget was the whole machine and ran steps past the limit."""
    root = tmp_path / "fs"
    _tree(
        root,
        {
            "unified/job/cpu.max": "50000 100000",
            "unified/job/memory.max": str(2 * GiB),
            "memory/memory.limit_in_bytes": "9223372036854771712",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1",
            "cpu,cpuacct/cpu.cfs_period_us": "100000",
        },
    )
    proc = _proc(tmp_path, "4:memory:/\n2:cpu,cpuacct:/\n0::/job\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\n")
    assert detect_cpus(proc, str(root)) == 0.5
    assert detect_memory(proc, str(root), str(meminfo)) == 2 * GiB


def test_a_v1_quota_under_a_combined_controller_mount(tmp_path: Path) -> None:
    root = tmp_path / "fs"
    _tree(
        root,
        {
            "cpu,cpuacct/job/cpu.cfs_quota_us": "50000",
            "cpu,cpuacct/job/cpu.cfs_period_us": "100000",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1",
            "cpu,cpuacct/cpu.cfs_period_us": "100000",
        },
    )
    proc = _proc(tmp_path, "2:cpu,cpuacct:/job\n")
    assert detect_cpus(proc, str(root)) == 0.5


def test_inside_a_container_the_mount_root_is_the_own_cgroup(tmp_path: Path) -> None:
    # Without a cgroup namespace the path names the host's view; only the root exists.
    root = tmp_path / "fs"
    _tree(root, {"memory/memory.limit_in_bytes": str(GiB)})
    proc = _proc(tmp_path, "4:memory:/docker/0123abcd\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683656 kB\n")
    assert detect_memory(proc, str(root), str(meminfo)) == GiB


def test_this_process_reports_sane_numbers() -> None:
    assert 0 < detect_cpus() <= (os.cpu_count() or 1)
    assert detect_memory() > 0


def test_config_sizes_override_detection() -> None:
    config = load_config({"execution.cpus": 3, "execution.memory": "6GiB"})
    session = Session(config=config)
    assert (session.budget.cpus, session.budget.memory) == (3.0, 6 * GiB)
    assert Budget.for_this_process().cpus == detect_cpus()


def _writable_cgroup(controller: str) -> Path | None:
    base = Path("/sys/fs/cgroup") / controller
    probe = base / f"shinobi-test-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return None
    return probe


@pytest.mark.skipif(sys.platform != "linux", reason="cgroups are Linux")
def test_a_real_cgroup_limit_sizes_the_budget() -> None:
    """Put a child process into real v1 cgroups with limits and ask it what it may use."""
    memory = _writable_cgroup("memory")
    cpu = _writable_cgroup("cpu")
    if memory is None or cpu is None:
        for made in (memory, cpu):
            if made is not None:
                made.rmdir()
        pytest.skip("needs writable cgroup v1 memory and cpu hierarchies (root on a v1 host)")
    try:
        (memory / "memory.limit_in_bytes").write_text(str(768 * 1024**2))
        (cpu / "cpu.cfs_period_us").write_text("100000")
        (cpu / "cpu.cfs_quota_us").write_text("50000")
        code = (
            "import os,sys\n"
            f"open('{memory}/cgroup.procs','w').write(str(os.getpid()))\n"
            f"open('{cpu}/cgroup.procs','w').write(str(os.getpid()))\n"
            "from shinobi.session import Session\n"
            "from shinobi.config import load_config\n"
            "b = Session(config=load_config()).budget\n"
            "print(b.cpus, b.memory)\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        assert out == ["0.5", str(768 * 1024**2)]
    finally:
        for made in (memory, cpu):
            for _ in range(50):
                try:
                    made.rmdir()
                    break
                except OSError:  # the child's exit is noticed by the kernel asynchronously
                    time.sleep(0.05)


@pytest.mark.parametrize("memory", [0, "0GiB", "0"])
def test_a_memory_of_nothing_is_refused(memory: object) -> None:
    """No tool fits in it; compiled, it became --mem=1M."""
    with pytest.raises(ValueError, match="memory must be more than 0"):
        Resources(memory=memory)  # type: ignore[arg-type]


def test_add_step_resources_win_field_by_field() -> None:
    """``Resources(cpus=1)`` on a cab that declares 2 GiB replaced the whole
    declaration: the memory limit and the budget's memory share went with it."""
    from pydantic import BaseModel

    from shinobi.graph import build_graph
    from shinobi.steps import Cab, Recipe

    class In(BaseModel):
        pass

    tool = Cab("tool", "/bin/true", In, resources=Resources(memory="2GiB"))
    recipe = Recipe("r", In)
    recipe.add_step("own", tool)
    recipe.add_step("more", tool, resources=Resources(cpus=1))
    recipe.add_step("none", tool, resources=Resources())
    recipe.add_step("less", tool, resources=Resources(cpus=2, memory="1GiB"))
    shown = {n.name: n.resources.describe() for n in build_graph(recipe).nodes if n.resources}
    assert shown == {
        "own": "mem=2GiB",
        "more": "cpus=1 mem=2GiB",
        "none": "mem=2GiB",
        "less": "cpus=2 mem=1GiB",
    }


@pytest.mark.parametrize("cpus", [1e-7, 0.0009])
def test_a_share_of_a_cpu_no_engine_can_write_is_refused(cpus: float) -> None:
    """``cpus=1e-7`` was written ``--cpus 0``: docker ran the step with no limit."""
    with pytest.raises(ValueError, match=r"cpus must be at least 0\.001"):
        Resources(cpus=cpus)
    assert Resources(cpus=0.001).cpus == 0.001
