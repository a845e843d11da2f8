"""What a run leaves behind besides its outputs, attached to a session in one place.

Three things hang off a session here so the runner stays a short list of
steps: the step cache (:mod:`shinobi.cache`), the live-writer check before a
step rewrites an existing output (:mod:`shinobi.stale`), and the run manifest
(:mod:`shinobi.provenance`), which follows the run as a :class:`RunObserver`.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shinobi.graph import Graph
    from shinobi.session import Session
    from shinobi.steps.result import RecipeResult

__all__ = ["CACHE_ORIGINS", "CacheOrigins", "Records", "attach_records"]

#: The file in a run's folder naming, for each step served from the step
#: cache, the run that ran it (``ninja logs`` reads it where no manifest is).
CACHE_ORIGINS = "cached-from.json"


class Records:
    """The records of one run: ``close`` finalises them with the run's result,
    ``abort`` with the exception that ended it instead."""

    def __init__(self) -> None:
        self.closers: list[Callable[[RecipeResult], None]] = []
        self.aborters: list[Callable[[BaseException], None]] = []

    def close(self, result: RecipeResult) -> None:
        """Finalise every record; the first that could not be written (a full
        disk) is raised once all were tried, so one does not cost the others."""
        failure: OSError | None = None
        for closer in self.closers:
            try:
                closer(result)
            except OSError as exc:
                failure = failure or exc
        if failure is not None:
            raise failure

    def abort(self, exc: BaseException) -> None:
        for aborter in self.aborters:
            aborter(exc)


class CacheOrigins:
    """Which run ran each step this run took from the step cache.

    A cached step printed nothing in this run; what it printed is in the
    logs of the run that ran it, and ``ninja logs RUN STEP`` goes there. The
    manifest says so with ``--provenance``; this small file says it for
    every run that took anything from the cache, written when the run ends.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / CACHE_ORIGINS
        self.origins: dict[str, str] = {}
        #: A step served by another step's result (of the same command): that step's name.
        self.ran_as: dict[str, str] = {}

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        pass

    def step_finished(self, result: Any) -> None:
        if result.status == "cached":
            origin = result.details.get("cached_from")
            if isinstance(origin, str):
                self.origins[result.name] = origin
                ran_as = result.details.get("cached_step")
                if isinstance(ran_as, str) and ran_as != result.name:
                    self.ran_as[result.name] = ran_as

    def warning(self, message: str) -> None:
        pass

    def write(self) -> None:
        """Write the file, if any step came from the cache (a full disk loses only it)."""
        if not self.origins:
            return
        import json

        from shinobi.file_digests import write_atomically

        with contextlib.suppress(OSError):
            record = {"format": 1, "steps": self.origins, "ran_as": self.ran_as}
            write_atomically(self.path, json.dumps(record).encode())


def _usable_cache_dir(session: Session, root: Path) -> bool:
    """Whether results can be stored under ``root``; says why not, once, when they cannot.

    A cache that cannot be written would otherwise cost every run its full
    time again, with nothing to tell why.
    """
    from shinobi.file_digests import make_dirs

    try:
        if root.exists() and not root.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "it is not a directory")
        make_dirs(root)
        if not os.access(root, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "it is not writable")
    except OSError as exc:
        session.warn(
            f"the step cache at {root} cannot be used ({exc.strerror or exc}): this run"
            " caches nothing; set cache.dir (SHINOBI_CACHE_DIR) to a writable directory"
        )
        return False
    return True


def attach_records(
    session: Session, graph: Graph, inputs: dict[str, Any], provenance: bool | None
) -> Records:
    """Attach the cache, the stale-output check and the manifest to ``session``.

    ``provenance`` None follows ``provenance.enabled`` in the configuration.
    """
    records = Records()
    config = session.config
    if session.use_cache and _usable_cache_dir(session, config.cache_dir()):
        from shinobi.cache import StepCache
        from shinobi.file_digests import large_read_notice

        cache = StepCache(config.cache_dir(), run_id=session.run_id)
        cache.memo.on_large = lambda path, _read: session.warn(
            f"{large_read_notice(path)}; cache.enabled = false (SHINOBI_CACHE_ENABLED=0) skips it",
            once=f"large-read:{path}",
        )
        cache.on_refused = lambda said, topic: session.warn(said, once=f"cache-refused:{topic}")
        session.cache = cache
        from shinobi.cache_settle import rewrites_unsafely

        cache.trust_settled = not rewrites_unsafely(graph)
        records.closers.append(lambda result: cache.close(settle=result.ok))
        records.aborters.append(lambda _exc: cache.close())
        if session.run_dir is not None:
            origins = CacheOrigins(session.run_dir)
            session.observers.append(origins)
            records.closers.append(lambda _result: origins.write())
            records.aborters.append(lambda _exc: origins.write())
    if config.execution.clear_stale_outputs:
        from shinobi.stale import OutputGuard

        session.pre_run_checks.append(OutputGuard(session.warn).check)
    if config.provenance.enabled if provenance is None else provenance:
        from shinobi.provenance import ManifestRecorder

        recorder = ManifestRecorder.start(session, graph, inputs)
        session.observers.append(recorder)
        records.closers.append(lambda result: recorder.close(result, session))
        records.aborters.append(recorder.abort)
    return records
