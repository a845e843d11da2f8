"""When a live test skips for an engine it cannot reach, and when it fails instead."""

from __future__ import annotations

import typing

import pytest

from shinobi.backends.base import Backend
from shinobi.testing.plugin import require_backend, require_engine


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


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_backend_that_does_not_load_fails_its_suite_everywhere(
    monkeypatch: pytest.MonkeyPatch, ci: str
) -> None:
    """A typo'd backend_name (or a plugin that fails to import) skipped every test
    of the kit outside CI: "30 skipped", exit 0, for a plugin that never loaded."""
    monkeypatch.setenv("CI", ci)
    monkeypatch.delenv("SHINOBI_TESTBED_ENGINES", raising=False)
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception)) as failed:
        require_backend("nativ")
    assert failed.type is pytest.fail.Exception
    assert "backend 'nativ' cannot be tested: unknown backend 'nativ'" in str(failed.value)
    assert "did you mean 'native'?" in str(failed.value)


def test_the_ci_failure_names_no_script_a_plugin_author_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception) as failed:
        require_engine("nice", False, "nice not found on PATH")
    assert "testbed" not in str(failed.value)
    assert "make nice reachable on the CI machine" in str(failed.value)


def test_require_backend_is_typed_as_the_backend_it_returns() -> None:
    """It said ``-> object``: ``mypy --strict`` refused the documented
    ``require_backend("mine").run(...)``."""
    assert typing.get_type_hints(require_backend)["return"] is Backend
