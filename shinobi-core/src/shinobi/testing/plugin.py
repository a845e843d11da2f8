"""pytest plugin: live-engine gating shared by every package's tests.

A live test calls :func:`require_engine`. Outside CI an engine that cannot be
reached skips the test with the reason; in CI (``CI=true``) it fails it,
because a green run that silently skipped the real engine proves nothing.
A backend that does not load at all (it fails to import, no distribution
registers that name, its class is abstract) fails the test everywhere: that
is the plugin's own fault, which no engine coming up would mend.
"""

from __future__ import annotations

import os

import pytest

from shinobi.backends.base import Backend

__all__ = ["in_ci", "require_backend", "require_engine"]


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_engine(name: str, usable: bool, why: str) -> None:
    """Skip the calling test unless ``usable``; fail it instead in CI, or when the
    testbed said it brought that engine up (``SHINOBI_TESTBED_ENGINES``): an engine
    that came up and cannot be reached is a broken testbed, not a missing one."""
    if usable:
        return
    message = f"engine {name!r} is not usable here: {why}"
    if in_ci():
        pytest.fail(
            f"{message} (CI=true: a live test may not skip there; make {name} reachable on"
            " the CI machine, or unset CI to let the test skip)"
        )
    if name in os.environ.get("SHINOBI_TESTBED_ENGINES", "").split(","):
        pytest.fail(f"{message} (the testbed says it brought {name} up)")
    pytest.skip(message)


def require_backend(name: str, settings: dict[str, object] | None = None) -> Backend:
    """The backend ``name`` after its own ``check()``: skipped or failed as above when
    its engine is unusable, failed with the loader's reason when it does not load."""
    from shinobi.backends import get_backend
    from shinobi.errors import BackendNotFound

    try:
        backend = get_backend(name, settings or {})
    except BackendNotFound as exc:
        pytest.fail(f"backend {name!r} cannot be tested: {exc}", pytrace=False)
    status = backend.check()
    require_engine(name, status.usable, status.detail)
    return backend


def pytest_report_header(config: pytest.Config) -> str:
    engines = os.environ.get("SHINOBI_TESTBED_ENGINES", "")
    return f"shinobi: CI={in_ci()} testbed engines={engines or 'none'}"
