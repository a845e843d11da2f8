"""One run's shared state: configuration, backends, the budget, the teardown control.

Nested recipes run in the same session as their parent, which is how one
budget and one interrupt reach every step of a run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from shinobi.backends.base import Backend, Invocation, RunControl
from shinobi.step_names import scattered_step
from shinobi.stop_window import RecentRuns

if TYPE_CHECKING:
    from shinobi.config import AppConfig
    from shinobi.steps.result import StepResult

__all__ = ["LOG_NAMES", "RunObserver", "Session", "new_run_id", "safe_name"]

#: In a run's ``logs/``: the step each renamed log file belongs to, a JSON object a line.
LOG_NAMES = "names.jsonl"

_UNSAFE = re.compile(r"[^A-Za-z0-9._\-\[\]]+")
#: A scattered step's slice numbers, ``[12]`` (``[1][3]`` nested), kept as they are.
#: A pattern, compiled (and cached) by ``re`` only once a name needs changing.
_SLICES = r"(?:\[[0-9]+\])+$"
#: The longest name kept whole. A file name holds 255 bytes, and what is made
#: of a step name adds to it: ``.out``, ``.sbatch``, a workspace's ``-`` and
#: random suffix, up to :data:`_MAX_SLICES` of slice numbers.
_MAX_NAME = 200
_MAX_SLICES = 40
_HASH_CHARS = 16
#: What :meth:`Session.product_paths` looks into, and what it takes for a path.
_LISTS = (list, tuple)
_PATHS = (str, os.PathLike)


def safe_name(name: str) -> str:
    """A step name usable as a file name, the same every time, and never another's.

    Characters a file name should not hold become ``_``, a name of only dots
    (or none) gets a ``_`` in front, and a name cut because it is too long for
    a file name (a step of 300 characters) is cut short. A name changed in
    any of these ways gets a hash of the whole name appended, so ``cal ms``,
    ``cal:ms`` and ``cal_ms`` keep three logs instead of writing one. Slice
    numbers stay last, after the hash, so a scattered step's logs still start
    with its own safe name (which is how ``ninja logs RUN STEP`` finds every
    slice).
    """
    if len(name) <= _MAX_NAME and name.strip(".") and _UNSAFE.search(name) is None:
        return name  # nearly every name: nothing to change
    slices = re.search(_SLICES, name)
    base, tail = name, ""
    if slices is not None and len(slices.group()) <= _MAX_SLICES:
        base, tail = name[: slices.start()], slices.group()
    safe = _UNSAFE.sub("_", base)
    if safe == base and len(safe) <= _MAX_NAME and safe.strip("."):
        return f"{safe}{tail}"  # only its slice numbers made it look long
    if not safe.strip("."):  # never ".", "..", or a hidden file of dots
        safe = f"_{safe}"
    digest = hashlib.sha256(base.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    return f"{safe[: _MAX_NAME - _HASH_CHARS - 1]}-{digest}{tail}"


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class RunObserver(Protocol):
    """Receives a run's events: progress views, provenance and logs implement it."""

    def step_started(self, name: str, info: dict[str, Any]) -> None: ...

    def step_finished(self, result: StepResult) -> None: ...

    def warning(self, message: str) -> None: ...


@dataclass
class Session:
    """What every step of one run shares."""

    config: AppConfig
    cwd: str = field(default_factory=os.getcwd)
    backend_name: str | None = None
    run_id: str = field(default_factory=new_run_id)
    run_dir: Path | None = None
    observers: list[RunObserver] = field(default_factory=list)
    use_cache: bool = True
    #: Run every step without looking in the cache, and store what it makes,
    #: replacing the entries it bypassed (``ninja run --no-cache``): otherwise the
    #: next plain run replays the result that was bypassed, which is what a
    #: change the key cannot see (a script named inside ``sh -c``) needs to end.
    #: Moot when :attr:`use_cache` is false (no cache at all).
    refresh_cache: bool = False
    cache: Any = None
    pre_run_checks: list[Callable[[Invocation], None]] = field(default_factory=list)
    control: RunControl = field(init=False)
    budget: Any = field(init=False)
    _backends: dict[str, Backend] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    warned: set[str] = field(default_factory=set, init=False)
    #: Every warning of the run, for callers that watch it through no observer.
    warnings: list[str] = field(default_factory=list, init=False)
    interrupted: int | None = field(default=None, init=False)
    undying: tuple[int, ...] = field(default=(), init=False)
    #: dotted loop name -> cycle -> its until file, where the plan knows it
    until_planned: dict[str, dict[int, str]] = field(default_factory=dict, init=False)
    #: dotted loop name -> cycle -> (its until file, that file's signature right
    #: before the loop's first cycle); see :mod:`shinobi.stale_until`
    until_before: dict[str, dict[int, tuple[str, Any]]] = field(default_factory=dict, init=False)
    #: How many slices each scattered step was given, once known (full names):
    #: a run that stops early still lists those that never started.
    planned_slices: dict[str, int] = field(default_factory=dict, init=False)
    #: The Python steps running inside ninja now: no signal can stop them, so
    #: what ninja says on a second Ctrl-C names them.
    in_process: set[str] = field(default_factory=set, init=False)
    _started: set[str] = field(default_factory=set, init=False, repr=False)
    #: How each step (and slice) that finished ended, by its full name.
    ended: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _began_on_disk: int | None = field(default=None, init=False, repr=False)
    #: Warnings said only if the step they are about starts (see warn_when_started).
    _on_start: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _named: set[str] = field(default_factory=set, init=False, repr=False)
    #: The output paths of the steps of this run that are done (run or cached):
    #: an interrupted step's harvest glob matching one did not write it.
    products: set[str] = field(default_factory=set, init=False, repr=False)
    #: Set when a step of the run failed, in whichever recipe: from then on no
    #: recipe of the run, nested or not, starts anything new.
    step_failed: threading.Event = field(default_factory=threading.Event, init=False)
    #: The secret inputs (``SecretStr``) the run's steps were given: a step given
    #: one's text as a plain value (a tool upstream echoed it into an output)
    #: has it masked too (see :func:`shinobi.dispatch.step_secrets`).
    secrets: tuple[Any, ...] = field(default=(), init=False, repr=False)
    #: The tools' runs that ended ``ok`` lately: a stop right after takes them back.
    recent: RecentRuns = field(default_factory=RecentRuns, init=False, repr=False)
    #: This run's marker in the workdir's ``.shinobi/live/`` (see
    #: :mod:`shinobi.live_runs`); None where it could not be written.
    live_marker: Path | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        from shinobi.resources import Budget

        self.control = RunControl(grace=self.config.execution.grace_period)
        self.control.on_warning = self._backend_warning
        execution = self.config.execution
        self.budget = Budget.for_this_process(execution.cpus, execution.memory)
        if self.run_dir is not None:
            from shinobi.file_digests import make_dirs

            make_dirs(self.run_dir / "logs")  # shared as its workspace is

    @contextlib.contextmanager
    def python_inside(self, name: str, why: str) -> Iterator[None]:
        """While step ``name`` runs Python in ninja's own process: no signal stops it,
        so a stop says ``why`` at once (a warning) and a second Ctrl-C names it."""

        def cannot_stop() -> tuple[int, ...]:
            self.warn(why)
            return ()

        unregister = self.control.on_cancel(cannot_stop)
        self.in_process.add(name)
        try:
            yield
        finally:
            self.in_process.discard(name)
            unregister()

    @property
    def default_backend(self) -> str:
        return self.backend_name or self.config.backend.default

    def backend(self, name: str) -> Backend:
        """The backend instance named ``name``, created once per run."""
        with self._lock:
            existing = self._backends.get(name)
            if existing is not None:
                return existing
        from shinobi.backends import get_backend

        made = get_backend(name, self.config.backend_settings(name))
        self.config.check_backend_table(name, made.settings_keys)
        with self._lock:
            return self._backends.setdefault(name, made)

    def venv_of(self, node: Any) -> str | None:
        """The venv ``node`` runs in, if any: its own ``venv=``, else ``backend.venv``."""
        venv: str | None = node.venv or self.config.backend.venv
        return venv

    def cache_for(self, cab: Any, node: Any) -> Any:
        """The step cache, unless this step must not be cached.

        A step that rewrites an input in place is not cached unless its cab
        says it is safe (``Cab(cache=True)``): replaying it would skip a
        mutation the next step relies on.
        """
        if self.cache is None or cab.cache is False:
            return None
        if cab.cache is None and any(m.mutable for m in cab.field_meta.values()):
            return None
        return self.cache

    def log_paths(self, step: str) -> tuple[str | None, str | None]:
        if self.run_dir is None:
            return None, None
        stem = safe_name(step)
        if stem != step and step not in self._named:
            self._name_logs(stem, step)
        base = f"{self.run_dir}{os.sep}logs{os.sep}{stem}"  # per step: no pathlib
        return f"{base}.out", f"{base}.err"

    def runs_elsewhere(self) -> bool:
        """Whether a backend of this run runs its steps elsewhere (a Slurm job)."""
        return any(b.capabilities.remote for b in list(self._backends.values()))

    def note_products(self, outputs: Mapping[str, Any]) -> None:
        """Note a finished step's products (see :attr:`products`): every path among
        its output values, which hold its declared paths, what a harvest matched
        and what a pystep returned. A value that is no path costs nothing."""
        self.products.update(self.product_paths(outputs))

    def product_paths(self, outputs: Mapping[str, Any]) -> set[str]:
        """The paths among ``outputs``' values, as :meth:`note_products` notes them.

        Each is ``os.path.join(self.cwd, path)``, with ``self.cwd``'s part
        joined once per call rather than once per path (every step comes here).
        """
        prefix = os.path.join(self.cwd, "")
        found: set[str] = set()
        for value in outputs.values():
            for item in value if isinstance(value, _LISTS) else (value,):
                if isinstance(item, _PATHS):
                    path = os.fspath(item)
                    if isinstance(path, str) and not path.startswith("/"):
                        found.add(prefix + path)
                    else:  # absolute (join keeps it), or bytes (join refuses them)
                        found.add(os.path.join(self.cwd, path))
        return found

    def note_secrets(self, found: tuple[Any, ...]) -> None:
        """Add a step's secret inputs to :attr:`secrets` (steps run in threads)."""
        with self._lock:
            self.secrets += tuple(s for s in found if s not in self.secrets)

    def _name_logs(self, stem: str, step: str) -> None:
        """Note which step a log file whose name had to be changed belongs to
        (``cal ms`` → ``cal_ms-02ef…``), so ``ninja logs`` titles it by the
        step's name without a manifest. One line, appended, for the rare step
        named so; a failed write only costs the title."""
        import json

        self._named.add(step)
        line = json.dumps({"file": stem, "step": step}) + "\n"
        path = f"{self.run_dir}{os.sep}logs{os.sep}{LOG_NAMES}"
        with contextlib.suppress(OSError), open(path, "a") as names:
            names.write(line)

    # An observer that writes to a terminal gets EIO once the terminal is gone
    # (a dropped ssh connection, with SIGHUP on its way): that must not stop
    # the run from tearing its steps down and recording how it ended.
    def running_steps(self) -> bool:
        """Whether a step has started and not yet finished (what a stop waits for)."""
        return bool(self._started)

    def began_on_disk(self) -> int | None:
        """When the run began by the clock of the disk that holds its records (the
        modification time of its ``.steps``, in ns), or None without them."""
        if self.run_dir is None:
            return None
        if self._began_on_disk is None:
            from shinobi.local_runs import STEP_LIST

            try:
                self._began_on_disk = os.stat(self.run_dir / STEP_LIST).st_mtime_ns
            except OSError:
                self._began_on_disk = -1
        return None if self._began_on_disk < 0 else self._began_on_disk

    def steps_running(self) -> set[str]:
        """The steps (and slices) that have started and not yet finished."""
        return set(self._started)

    def warn_when_started(self, step: str, message: str) -> None:
        """Say ``message`` when ``step`` (or its first slice) starts, not before: a
        step the cache serves never starts, and the warning is not about it then."""
        with self._lock:
            self._on_start[step] = message

    def emit_started(self, name: str, info: dict[str, Any]) -> None:
        if self._on_start:
            with self._lock:  # the step's own, or its scatter's (NAME[k])
                said = self._on_start.pop(name, None) or self._on_start.pop(
                    scattered_step(name), None
                )
            if said is not None:
                self.warn(said)
        self._started.add(name)
        for observer in self.observers:
            with contextlib.suppress(OSError):
                observer.step_started(name, info)

    def plan_slices(self, name: str, count: int, steps_each: int) -> None:
        """Note that the scattered step ``name`` has ``count`` slices, each running
        ``steps_each`` steps (a nested recipe's), and tell the observers that
        count work (the live view's total): a step's slices are known only as
        it starts. An observer without ``slices_planned`` is not told."""
        self.planned_slices[name] = count
        for observer in self.observers:
            told = getattr(observer, "slices_planned", None)
            if told is not None:
                with contextlib.suppress(OSError):
                    told(name, count, steps_each)

    def emit_finished(self, result: StepResult) -> None:
        self._started.discard(result.name)
        self.ended[result.name] = result.status
        for observer in self.observers:
            with contextlib.suppress(OSError):
                observer.step_finished(result)

    def said_once(self, keys: Iterable[str]) -> None:
        """Note the ``once`` keys of warnings already said in another form (one line
        for many steps, before the run), so :meth:`warn` does not say them again."""
        with self._lock:
            self.warned.update(keys)

    def _backend_warning(self, message: str) -> None:
        """A backend's warning; a log the disk refused is said once a folder and cause."""
        from shinobi.backends.streams import LOGS_REFUSED

        self.warn(message, once=message if message.startswith(LOGS_REFUSED) else None)

    def warn(self, message: str, *, once: str | None = None) -> None:
        with self._lock:
            if once is not None:
                if once in self.warned:
                    return
                self.warned.add(once)
            self.warnings.append(message)
        for observer in self.observers:
            with contextlib.suppress(OSError):
                observer.warning(message)
