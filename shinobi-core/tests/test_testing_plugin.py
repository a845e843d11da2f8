"""When a live test skips for an engine it cannot reach, and when it fails instead."""

from __future__ import annotations

import pytest

from shinobi.testing.plugin import require_engine


@pytest.mark.parametrize(
    ("ci", "brought_up", "outcome"),
    [
        ("", "", pytest.skip.Exception),
        ("true", "", pytest.fail.Exception),
        ("", "slurm,docker", pytest.fail.Exception),  # the testbed said docker is up
    ],
)
def test_an_unreachable_engine_skips_only_where_nobody_said_it_is_up(
    monkeypatch: pytest.MonkeyPatch, ci: str, brought_up: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("SHINOBI_TESTBED_ENGINES", brought_up)
    with pytest.raises(outcome):
        require_engine("docker", False, "no daemon")
    require_engine("docker", True, "")  # usable: nothing happens
