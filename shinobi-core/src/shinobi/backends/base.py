"""The Backend interface: the one contract between the kernel and an engine.

A backend receives an :class:`Invocation` (plain data: argv, paths and their
roles, resources, image) and returns a :class:`BackendRun`. It never sees a
Recipe, which is what lets the same graph run natively, in a container or on a
cluster, and what keeps plugins independent of the kernel's internals.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from shinobi.backends.streams import MAX_CAPTURE

if TYPE_CHECKING:
    from shinobi.resources import Resources

__all__ = [
    "Availability",
    "Backend",
    "BackendRun",
    "Capabilities",
    "Invocation",
    "PathKind",
    "PathRole",
    "PathUse",
    "Rendered",
    "RunControl",
]

PathRole = Literal["input", "output"]
PathKind = Literal["file", "dir", "any"]


@dataclass(frozen=True, slots=True)
class PathUse:
    """One filesystem path a step touches, as declared by its cab's schema.

    Container backends derive mounts from these; the offload compiler derives
    ordering edges from them. ``pattern`` marks a harvest glob, whose directory
    (not the pattern itself) is what the tool writes into.
    """

    path: str
    role: PathRole
    field: str
    kind: PathKind = "any"
    writable: bool = True
    mutable: bool = False
    pattern: bool = False

    def __init__(
        self,
        path: str,
        role: PathRole,
        field: str,
        kind: PathKind = "any",
        writable: bool = True,
        mutable: bool = False,
        pattern: bool = False,
    ) -> None:
        """The dataclass's own ``__init__``, but storing through the slots' setters.

        A frozen dataclass stores each field through ``object.__setattr__``
        (2.1 us a PathUse on this VM, against 0.8 this way); a plan makes two
        or more a step, 3 % of a 10,000-step dry run. Frozen all the same:
        only this bypasses the refusal to assign. test_pathuse_init keeps
        the signature equal to the one the dataclass would write.
        """
        _set_path(self, path)
        _set_role(self, role)
        _set_field(self, field)
        _set_kind(self, kind)
        _set_writable(self, writable)
        _set_mutable(self, mutable)
        _set_pattern(self, pattern)


# the slots' own setters, taken once the dataclass has made its slotted class
(_set_path, _set_role, _set_field, _set_kind, _set_writable, _set_mutable, _set_pattern) = (
    PathUse.__dict__[name].__set__
    for name in ("path", "role", "field", "kind", "writable", "mutable", "pattern")
)


@dataclass(frozen=True, slots=True)
class Invocation:
    """Everything a backend needs to run one step, and nothing it must not know.

    ``stdout_capture`` and ``stderr_capture`` are how many bytes of the end of
    each stream the kernel reads from :class:`BackendRun`: the whole of a
    stream a cab's wranglers read (up to
    :data:`~shinobi.backends.streams.MAX_CAPTURE`), else a tail
    (:data:`~shinobi.backends.streams.TAIL_CAPTURE`) for the result and the
    failure's line. A backend keeps no more than that in memory; the log files
    get everything.
    """

    step: str
    argv: tuple[str, ...]
    cwd: str
    env: Mapping[str, str] = field(default_factory=dict)
    paths: tuple[PathUse, ...] = ()
    resources: Resources | None = None
    image: str | None = None
    venv: str | None = None
    run_id: str = ""
    stdout_path: str | None = None
    stderr_path: str | None = None
    scratch_dir: str | None = None
    stdout_capture: int = MAX_CAPTURE
    stderr_capture: int = MAX_CAPTURE


@dataclass(slots=True)
class BackendRun:
    """The raw outcome of one invocation, before wranglers read it.

    ``reason`` is the backend's own account of an abnormal end (out of memory,
    a Slurm TIMEOUT, ...), worded for the user. ``undying`` lists pids that
    survived SIGKILL: their step's workspace must be left alone.

    ``visible`` lists the host paths the step could reach, each at the same
    path where it ran (a container's bind mounts); None: the whole host, as
    natively. An output named outside them (a wrangled path, a pystep's
    return) was written where the host cannot see it, and core fails the
    step rather than hand on whatever file the host has at that path.

    ``stdout`` and ``stderr`` are what the tool printed: all of it, or, of a
    stream longer than the invocation's ``stdout_capture`` or
    ``stderr_capture`` bytes, at least that many of its last bytes (a little
    more does no harm). A backend that runs the tool through another
    program's client (a container engine) leaves out of ``stderr`` the lines that
    client printed of its own accord on a run that went well (docker's
    "IPv4 forwarding is disabled" warning) and gives them as ``engine_stderr``:
    the cab's wranglers and the tail a result keeps are the tool's alone, and
    the step's record keeps the engine's apart. The stderr log file holds both,
    as they arrived.

    ``left_running`` names (``pid N (command)``) the processes a step that
    went well left running after its command exited, which may still change
    its outputs: the step warns, and its result is not cached. ``stopped``
    names those a step that failed by itself (a non-zero exit, a signal not
    of ninja's) left running, which were stopped before it was reported, so
    they cannot write into a later step or run; the step warns of them.
    """

    returncode: int
    stdout: str = ""
    stderr: str = ""
    signal: int | None = None
    reason: str | None = None
    oom: bool = False
    cancelled: bool = False
    undying: tuple[int, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    visible: tuple[str, ...] | None = None
    engine_stderr: str = ""
    left_running: tuple[str, ...] = ()
    stopped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Rendered:
    """A step as a compiled job runs it, with no ninja around.

    ``stop`` is run by the job when it is cancelled or reaches its time
    limit, for a payload that ending the job's own processes does not end:
    a container that the engine's daemon owns outlives its killed client.
    None: the payload is among the job's processes and ends with them.
    ``warnings`` are what a run of the step here would warn of before it
    starts (a declared limit the engine cannot apply on this host): a dry
    run says them too, or the command it shows would drop a flag unsaid.
    """

    argv: list[str]
    stop: list[str] | None = None
    warnings: tuple[str, ...] = ()
    #: Run once the payload has ended (before ``stop``, which then removes what
    #: is left): prints ``true`` when the engine killed the payload for memory. A
    #: worker process killed so leaves its main process free to exit 0; without
    #: this a job would end "completed" on what the kill cut short.
    oom_probe: list[str] | None = None


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can promise; the conformance suite tests what is claimed."""

    isolation: bool = False
    enforces_resources: bool = False
    remote: bool = False
    images: bool = False
    interruptible: bool = True


@dataclass(frozen=True, slots=True)
class Availability:
    """The answer of :meth:`Backend.check`, shown by ``ninja backends``."""

    usable: bool
    detail: str


class RunControl:
    """The run a step belongs to, as seen from inside a backend.

    A backend registers a stopper for whatever it started; when the run is
    interrupted the stopper is called from the coordinating thread, and the
    backend's blocking :meth:`Backend.run` is expected to return soon after.
    """

    def __init__(self, grace: float = 10.0) -> None:
        from shinobi.teardown import new_run_prefix

        self.grace = grace
        #: What the tags of this run's step processes start with: what its
        #: teardown sweeps, and no other run's (see ``shinobi.teardown``).
        self.tag_prefix = new_run_prefix()
        self.cancelled = threading.Event()
        #: Set by the signal handler the moment a stop is asked for, before the
        #: coordinating thread gets to :meth:`cancel`: a step that ends in
        #: between is cancelled, not a success (a tool that exits 0 on SIGTERM
        #: leaves a partial product), and no step starts.
        self.stop_requested = threading.Event()
        #: When :meth:`request_stop` was called (``time.time()``): a step that
        #: failed after it failed because of the stop, and is not to blame.
        self.stop_requested_at: float | None = None
        #: Set by a second interrupt: stoppers skip what is left of the grace period.
        self.hurry = threading.Event()
        self._lock = threading.Lock()
        self._stoppers: dict[int, Callable[[], tuple[int, ...]]] = {}
        self._next = 0
        self.warnings: list[str] = []
        self.on_warning: Callable[[str], None] | None = None

    def on_cancel(self, stopper: Callable[[], tuple[int, ...]]) -> Callable[[], None]:
        """Register ``stopper`` (returns pids that would not die); returns an unregister."""
        with self._lock:
            key = self._next
            self._next += 1
            self._stoppers[key] = stopper
            late = self.cancelled.is_set()
        if late:
            stopper()

        def unregister() -> None:
            with self._lock:
                self._stoppers.pop(key, None)

        return unregister

    def request_stop(self) -> None:
        """Ask the run to stop (the signal handler does), noting when."""
        if self.stop_requested_at is None:
            self.stop_requested_at = time.time()
        self.stop_requested.set()

    def stopped_before(self, finished: float | None) -> bool:
        """Whether a stop was asked for before ``finished`` (a step's end; None:
        it just ended): a step that failed then was stopped, it did not fail first."""
        asked = self.stop_requested_at
        return asked is not None and (finished is None or finished >= asked)

    def stopping(self) -> bool:
        """Whether the run is being stopped (asked to, or already tearing down)."""
        return self.cancelled.is_set() or self.stop_requested.is_set()

    def cancel(self) -> tuple[int, ...]:
        """Stop everything registered, in parallel; return pids that survived."""
        self.cancelled.set()
        with self._lock:
            stoppers = list(self._stoppers.values())
        survivors: list[int] = []
        lock = threading.Lock()

        def call(stop: Callable[[], tuple[int, ...]]) -> None:
            left = stop()
            with lock:
                survivors.extend(left)

        threads = [
            threading.Thread(target=call, args=(s,), daemon=True, name="shinobi-stop")
            for s in stoppers
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return tuple(survivors)

    def warn(self, message: str) -> None:
        """Report ``message`` to the run's observers (kept in ``warnings`` too)."""
        self.warnings.append(message)
        if self.on_warning is not None:
            self.on_warning(message)


class Backend(ABC):
    """Runs invocations somewhere. Subclasses live in core or in plugins.

    ``settings`` is this backend's configuration table (``[backend.NAME]`` in a
    config file) merged over the global ``backend`` keys; each plugin documents
    the keys it reads.
    """

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: The keys this backend reads from its ``[backend.NAME]`` table; any other
    #: key there is refused as a typo when the backend is loaded. None: unchecked.
    settings_keys: ClassVar[frozenset[str] | None] = None
    #: What the entries of this backend's ledger of a run are (see :meth:`live_jobs`),
    #: as a message names one: ``job`` (a batch job), ``container``.
    ledger_noun: ClassVar[str] = "job"

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        self.settings: Mapping[str, Any] = dict(settings or {})

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        """Refuse a value in ``settings`` this backend cannot use, as its run would.

        ``ninja doctor`` and ``ninja backends`` ask this, so a bad
        ``[backend.NAME]`` value is found before a run loads the backend. Raise
        :class:`shinobi.errors.ConfigError` whose message starts with
        ``[backend.NAME] KEY`` (or ``backend.NAME.KEY``): ninja adds the file or
        variable that set it. Read switches with :func:`shinobi.config.config_bool`.
        The default checks nothing.
        """
        return None

    def check(self) -> Availability:
        """Whether this engine is usable on this host, and why not."""
        return Availability(True, "ready")

    @abstractmethod
    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        """Run ``invocation`` to completion (blocking) and report what happened."""

    def render(self, invocation: Invocation) -> list[str]:
        """The step as one command line that stands on its own.

        ``--dryrun`` shows it and a compiled job (``ninja compile``) runs it,
        with no ninja around to clean up after it: a backend whose runs need
        cleaning up renders a command that does that itself.
        """
        return list(invocation.argv)

    def render_for_job(self, invocation: Invocation, *, batch: bool = False) -> Rendered:
        """What a compiled job runs for the step, and how it stops it (see :class:`Rendered`).

        The command is :meth:`render`'s; a backend whose payload outlives a
        killed client (a daemon-owned container) overrides this to name the
        command that stops it, which the job runs when it is cancelled.
        ``batch``: for a batch system's job (``ninja compile``), whose own
        limits may hold the step (see the container backends); otherwise the
        command as this machine would run it (the dry run, the cache's look
        at which limits a step ran under).
        """
        return Rendered(self.render(invocation))

    def image_digest(self, image: str, cwd: str | None = None) -> str | None:
        """The content digest ``image`` resolves to on this engine, or None if unknown.

        The step cache keys on it (asking once per image and directory per
        run), so a tag that moved to a new image is not mistaken for the old
        one. ``cwd`` is the step's working directory, against which an image
        file named relatively (``tools/wsclean.sif``) is found. Engines that
        can inspect images override this.
        """
        return None

    def prepare(self, invocations: list[Invocation]) -> list[str]:
        """Checks before anything runs (e.g. refused mounts); returns warnings.

        Raise :class:`shinobi.errors.ShinobiError` to refuse the run.
        """
        return []

    def live_jobs(self, listed: Mapping[str, Sequence[str]]) -> dict[str, list[str]] | None:
        """Which of the batch jobs (or containers: whatever runs apart from ninja's
        own processes) that runs listed in their ledgers are still queued
        or running: ``listed`` maps a run id to the job ids its ledger
        (:data:`shinobi.local_runs.JOBS_LEDGER`, ``<run folder>/<backend name>/``)
        lists, and the answer, by run id,
        holds those that live on (a run with none may be left out).

        A ninja killed outright cannot cancel its jobs, and they write on: the next
        run in the workdir refuses to start beside them, and ``ninja clean --runs``
        keeps their run's folder. Asked only of a run whose ninja is gone, so a
        backend should ask its engine once for all of them. Raise
        :class:`shinobi.errors.ShinobiError` when the engine cannot be asked; None
        (the default): this backend cannot tell, and its jobs are treated as such.
        """
        return None

    def jobs_stop_command(self, job_ids: Sequence[str]) -> str | None:
        """The command that stops ``job_ids`` (of :meth:`live_jobs`), for the user to
        run; None: none to name (the message says to use the engine's own tools)."""
        return None
