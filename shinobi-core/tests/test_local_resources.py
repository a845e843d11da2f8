"""A run's memory budget where ``/proc/meminfo`` cannot be read (macOS, a masked /proc).

Detection used to answer 0 bytes there, and a budget of 0 bytes refuses to
exist: every run failed before its first step with a ValueError.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shinobi import resources
from shinobi.resources import Budget, Resources, detect_memory


def test_without_meminfo_the_ram_comes_from_the_c_library(tmp_path: Path) -> None:
    missing = str(tmp_path / "absent")
    expected = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert detect_memory(missing, str(tmp_path), missing) == expected > 0


def test_memory_that_cannot_be_found_out_gates_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resources, "detect_memory", lambda: 0)
    budget = Budget.for_this_process(cpus=2)
    ticket = budget.request("big", Resources(cpus=1, memory="64GiB"))
    assert ticket is not None and ticket.granted and not ticket.oversized
