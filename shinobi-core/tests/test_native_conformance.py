"""The native backend passes the conformance suite every backend passes."""

from __future__ import annotations

from shinobi.testing.conformance import BackendConformance


class TestNativeConformance(BackendConformance):
    backend_name = "native"
