"""An ``SBATCH_*`` variable that asks for the time or size an ``#SBATCH`` line says,
spelt another way, is not warned about.

``SBATCH_TIMELIMIT=5`` (or ``0:05:00``) was warned of as overriding
``--time=00:05:00``, though Slurm reads both as five minutes: the values were
compared as text. Times are now compared in Slurm's minutes, sizes in MiB.
"""

from __future__ import annotations

from shinobi_slurm.sbatch import Option, memory_mib, overriding_environment, time_minutes


def test_times_and_sizes_are_compared_as_slurm_reads_them() -> None:
    for same in ("5", "5:00", "0:05:00", "00:05:00", "4:30", "0-0:5"):
        assert time_minutes(same) == 5, same
    assert time_minutes("1-2") == time_minutes("26:00:00") == 26 * 60
    assert time_minutes("1-2:03:04") == 26 * 60 + 4
    assert time_minutes("0") == time_minutes("UNLIMITED") == 0
    assert time_minutes("soon") is None
    assert memory_mib("1G") == memory_mib("1024M") == memory_mib("1024") == 1024
    assert memory_mib("1025K") == 2 and memory_mib("lots") is None
    time = [Option("time", "00:05:00")]
    jobs = [[Option("job-name", "x"), *time, Option("mem", "1024M")]]
    for value in ("5", "0:05:00", "4:30"):
        assert overriding_environment({"SBATCH_TIMELIMIT": value}, jobs, time) == []
    assert overriding_environment({"SBATCH_MEM_PER_NODE": "1G"}, jobs, time) == []
    assert len(overriding_environment({"SBATCH_TIMELIMIT": "6"}, jobs, time)) == 1
    assert len(overriding_environment({"SBATCH_MEM_PER_NODE": "2G"}, jobs, time)) == 1
    abbreviated = [[Option("ti", "10")]]
    assert overriding_environment({"SBATCH_TIMELIMIT": "0:10:00"}, abbreviated, []) == []
