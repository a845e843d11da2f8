"""What every container backend does the same way, whatever its engine.

A run is: refuse what cannot be honoured (no image, impossible mounts, an
image that cannot be pinned), work out the mounts and the limit flags, run
the engine's CLI blocking with its output going straight to the step's logs,
and read the exit for out-of-memory, signals and refused limits. Engines
differ only in the hooks below: how a run is spelled, how a container is
removed, how limits are probed and how an image is pinned.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
from abc import abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from shinobi.backends.base import (
    Availability,
    Backend,
    BackendRun,
    Capabilities,
    Invocation,
    Rendered,
    RunControl,
)
from shinobi.backends.process import run_process
from shinobi.step_names import unsliced
from shinobi_containers.cgroups import UNPROBED, CgroupReach
from shinobi_containers.cli import TIMED_OUT, call
from shinobi_containers.engine_lines import split_engine_lines
from shinobi_containers.errors import (
    ContainerRefused,
    ContainerStopFailed,
    EngineMissing,
    EngineUnreachable,
    MountRefused,
    SettingsInvalid,
)
from shinobi_containers.limits import (
    LimitFlags,
    dropped_warning,
    limit_flags,
    overridden_warning,
    within_host,
)
from shinobi_containers.mounts import (
    CONTAINER_DEVICES,
    LOCAL_HOST,
    Mount,
    plan_mounts,
    unquotable_path,
)
from shinobi_containers.oom import OomWatch
from shinobi_containers.outcome import interpret_run
from shinobi_containers.read_only_links import read_only_links, replaced_link
from shinobi_containers.scripts import script_mounts, unseen_script_reason
from shinobi_containers.settings import SETTINGS_KEYS, ContainerSettings, limit_flags_in
from shinobi_containers.stall import StallWatch

__all__ = [
    "CHECK_TIMEOUT",
    "ContainerBackend",
    "ContainerSpec",
    "new_container_name",
    "spaced_reference",
    "stray_space",
    "visible_paths",
]

#: Seconds ``check()`` waits for an engine before calling it unusable.
CHECK_TIMEOUT = 5.0


class _Unread:
    """:meth:`ContainerBackend.site_binds` not asked yet (None is an answer)."""


_UNREAD = _Unread()


def new_container_name() -> str:
    """``shinobi-<random>``: findable with ``docker ps -f name=shinobi-``, never reused."""
    return f"shinobi-{secrets.token_hex(6)}"


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """One step's container, everything but its name decided."""

    invocation: Invocation
    image: str
    mounts: tuple[Mount, ...]
    limits: LimitFlags
    digest: str | None = None


class ContainerBackend(Backend):
    """Runs a step's image with an engine's CLI; subclasses spell the engine."""

    #: Whether a compiled job's command carries the step's ``--memory``/``--cpus``.
    #: An engine whose payload stays in the job's own cgroup (apptainer, a
    #: child of its client) leaves them to the batch system, which sets the
    #: job's limit from the same declared resources and reports its kills.
    limits_in_jobs: ClassVar[bool] = True

    capabilities: ClassVar[Capabilities] = Capabilities(
        isolation=True, enforces_resources=True, images=True, interruptible=True
    )
    #: Exit codes the engine uses for its own failures rather than the payload's.
    engine_error_codes: ClassVar[frozenset[int]] = frozenset()
    #: Whether the engine reports a payload killed by signal N as exit 128+N.
    signal_exit_codes: ClassVar[bool] = False
    #: The container gets a /dev/shm of its own that the host's cannot be mounted
    #: over (see :func:`~shinobi_containers.mounts.plan_mounts`).
    own_shm: ClassVar[bool] = False
    #: The engine takes a limit it cannot apply and runs the container without it
    #: (rootless podman on cgroup v1), where others refuse to start it.
    ignores_unenforceable_limits: ClassVar[bool] = False
    #: The lines the engine's client prints of its own accord before or after the
    #: payload's (see :mod:`~shinobi_containers.engine_lines`); None: it prints none.
    engine_lines: ClassVar[re.Pattern[str] | None] = None
    settings_keys = SETTINGS_KEYS

    @classmethod
    def check_settings(cls, settings: Mapping[str, Any]) -> None:
        """Refuse what :meth:`__init__` would (for ``ninja doctor``)."""
        ContainerSettings.from_mapping(cls.name, settings)

    def __init__(self, settings: Mapping[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.options = ContainerSettings.from_mapping(self.name, self.settings)
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._pins: dict[str, tuple[str, str]] = {}
        #: What :meth:`refuse_impostor` found ("" once the binary proved the engine).
        self._impostor: str | None = None
        #: :meth:`site_binds`' answer, asked once (the site's files do not change mid-run).
        self._site: tuple[str, ...] | _Unread | None = _UNREAD

    @property
    def binary(self) -> str:
        return self.options.binary

    # -- the Backend interface ---------------------------------------------------
    #: Words ``BINARY --version`` starts with for this engine (apptainer answers
    #: for singularity too, on hosts that install it under the old name).
    version_words: ClassVar[tuple[str, ...]] = ()

    def check(self) -> Availability:
        if shutil.which(self.binary) is None:
            return Availability(False, self._not_found())
        impostor = self._not_the_engine()
        if impostor is not None:
            return Availability(False, impostor)
        status = self.check_engine()
        idle = [*self.idle_settings(), *self._overriding_flags()]
        if not status.usable or not idle:
            return status
        return Availability(True, "; ".join([status.detail, *(f"warning: {w}" for w in idle)]))

    def version_lines(self) -> list[str] | None:
        """What ``BINARY --version`` prints, line by line (None: it did not answer)."""
        answer = call([self.binary, "--version"], CHECK_TIMEOUT)
        if answer.returncode == TIMED_OUT:
            return None
        lines = (line.strip() for line in f"{answer.stdout}\n{answer.stderr}".splitlines())
        return [line for line in lines if line]

    def answers_as(self, words: tuple[str, ...]) -> bool:
        """Whether a line ``BINARY --version`` prints starts with one of ``words``."""
        return _starts_with(self.version_lines(), words)

    def _not_the_engine(self) -> str | None:
        """Why a configured ``binary`` is some other program (``/bin/false``, docker
        named as podman), whose answers the engine's own check would misread."""
        if self.binary == self.name or not self.version_words:
            return None
        said = self.version_lines()
        if said is None:
            return None  # slow is no proof of another program: the engine's check says why
        if _starts_with(said, self.version_words):
            return None  # a site's wrapper may print a banner of its own first
        first = said[0] if said else ""
        shown = f"says {first[:80]!r}" if first else "says nothing"
        return (
            f"{self.binary} is not {self.name}: `{self.binary} --version` {shown}; point"
            f" backend.{self.name}.binary at the {self.name} program, or leave it unset"
        )

    def impostor(self) -> str | None:
        """What ``ninja backends`` says when ``binary`` is some other program, or None.

        Its answers were read as the engine's: ``/bin/false`` made the docker
        backend report its (running) daemon unreachable, and podman's steps
        fail one by one. Asked only once something failed (a run that works
        pays no ``--version`` call), and once per backend.
        """
        with self._lock:
            if self._impostor is None:
                self._impostor = self._not_the_engine() or ""
            said = self._impostor
        return said or None

    def _not_found(self) -> str:
        if "/" in self.binary:  # a path was given: PATH has nothing to do with it
            what = "is not executable" if os.path.exists(self.binary) else "does not exist"
            return (
                f"{self.binary} {what}: point backend.{self.name}.binary at the {self.name}"
                f" program, or leave it unset to find {self.name} on PATH"
            )
        return (
            f"{self.binary} not found on PATH: install {self.name}, or point"
            f" backend.{self.name}.binary at it"
        )

    def prepare(self, invocations: list[Invocation]) -> list[str]:
        """Refuse what no run could honour, before any step starts; return warnings."""
        if invocations and shutil.which(self.binary) is None:  # every step would fail on it
            if self.binary == self.name:  # left to PATH: this machine lacks the engine
                raise EngineMissing(self._not_found())
            raise SettingsInvalid(self._not_found())
        if invocations:
            try:
                self.reach_daemon()
            except EngineUnreachable:
                said = self.impostor()  # the daemon may be fine: the binary is not docker
                if said is not None:
                    raise SettingsInvalid(said) from None
                raise
            # a configured binary that answers 0 to everything (`/bin/true`) made every
            # step "succeed" having run nothing; the engine's own name is not asked
            said = self.impostor()
            if said is not None:
                raise SettingsInvalid(said)
        self._refuse_imageless(invocations)
        if self.options.pin_image:
            self._refuse_unpinnable(invocations)
        warnings: list[str] = self.idle_settings() if invocations else []
        for invocation in invocations:
            # planned before any step has run: an input an earlier step makes is not there yet
            warnings += self._new_warnings(self.spec(invocation, pin=False, ahead=True))
        return warnings

    def idle_settings(self) -> list[str]:
        """A warning for each setting given that this engine ignores (another engine's
        key): said once a run plans its steps, and by ``ninja backends``/``doctor``."""
        return []

    def _overriding_flags(self) -> list[str]:
        """For ``ninja backends``/``doctor``: the ``run_flags`` options that replace a
        limit ninja sets from a step's declared resources. A run says so only once a
        step declares that limit (a site may cap every container that way)."""
        if self.options.enforce_resources == "never":
            return []  # ninja sets no limits: run_flags' are the only ones
        found = limit_flags_in(self.options.run_flags, self.name)
        return [overridden_warning(self.name, flag, limit) for flag, limit in found.items()]

    def _refuse_unpinnable(self, invocations: Sequence[Invocation]) -> None:
        """Pin each image the run names once, before any step: one that cannot be
        pinned (not in the local store, a URI apptainer cannot pin, a file this user
        cannot read) failed its step only when that step's turn came, after every
        step before it had run."""
        seen: set[str] = set()
        for invocation in invocations:
            image = self.image_reference(invocation)
            if image not in seen:
                seen.add(image)
                self.pin(invocation)  # raises ImageUnavailable, naming the image and the fix

    def _refuse_imageless(self, invocations: Sequence[Invocation]) -> None:
        """Refuse every step that names no image in one message: naming the first
        only sent the user round once per step (fix one cab, run, be refused again)."""
        steps = _declared_steps([i.step for i in invocations if not i.image])
        if len(steps) == 1:
            raise ContainerRefused(_no_image_message(steps[0], self.name))
        if steps:
            shown = ", ".join(repr(step) for step in steps[:_IMAGELESS_NAMED])
            rest = len(steps) - _IMAGELESS_NAMED
            more = f" and {rest} more" if rest > 0 else ""
            raise ContainerRefused(
                f"{len(steps)} steps name no image ({shown}{more}), so the {self.name} backend"
                " cannot run them: give their cabs an image, or choose a backend such as"
                " native for them"
            )

    def client_directory(self, invocation: Invocation) -> str:
        """Where the engine's client runs: every path it is given is absolute,
        and the payload's own directory is set inside the container."""
        return invocation.cwd

    def render(self, invocation: Invocation) -> list[str]:
        return self.render_for_job(invocation).argv

    def render_for_job(self, invocation: Invocation, *, batch: bool = False) -> Rendered:
        """The command a job script runs: the engine's, with the variables its
        client needs set by ``env`` (a script has no ``client_environment``),
        and what stops its container (see :meth:`stop_command`). In a batch
        system's job an engine that leaves limits to it (:attr:`limits_in_jobs`)
        gives none, and warns of none it would have dropped."""
        name = new_container_name()
        spec = self.spec(invocation, pin=False, ahead=True)
        if batch and not self.limits_in_jobs:
            spec = replace(spec, limits=LimitFlags())
        command = self.command(spec, name)
        variables = self.client_variables(invocation)
        prefix = ["env", *(f"{k}={v}" for k, v in variables.items())] if variables else []
        stop = self.stop_command(name)
        probe = self.oom_probe_command(name)
        dropped = tuple(self._dropped_warnings(spec).values())
        return Rendered(
            [*prefix, *command],
            [*prefix, *stop] if stop else None,
            dropped,
            oom_probe=[*prefix, *probe] if probe else None,
        )

    def oom_probe_command(self, name: str) -> list[str] | None:
        """What prints ``true`` once container ``name`` has ended, if the engine killed
        it for memory (None: the engine keeps no such record for a job to ask)."""
        return None

    def stop_command(self, name: str) -> list[str] | None:
        """The command that ends container ``name`` when its client was killed
        (None: the payload runs under the client and dies with it)."""
        return None

    def note_started(self, invocation: Invocation, name: str, control: RunControl) -> None:
        """Note container ``name`` where a ninja killed outright leaves word of it
        (the default: nowhere, for a payload that runs under the client and is
        found by its processes' tag, as a native step's tools are)."""
        del invocation, name, control

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        spec = self.spec(invocation, pin=self.options.pin_image)
        for message in self._new_warnings(spec):
            control.warn(message)
        name = new_container_name()
        self.note_started(invocation, name, control)
        left: str | None = None
        links = read_only_links(invocation)
        watch = self.watch_for_oom(spec)
        stall = self.watch_for_stall(spec)
        try:
            run = run_process(
                self.command(spec, name),
                cwd=self.client_directory(invocation),
                control=control,
                env=self.client_environment(invocation),
                stdout_path=invocation.stdout_path,
                stderr_path=invocation.stderr_path,
                stdout_capture=invocation.stdout_capture,
                stderr_capture=invocation.stderr_capture,
                before_kill=lambda: self._stop(name, control),
                # an apptainer payload's background writer outlives its command
                # (no container ends it): the output is unfinished, as natively
                outputs=invocation.paths,
                started=stall.start if stall is not None else None,
            )
            run = self._tool_stderr(run)
            try:
                oom_killed = None if run.cancelled else self.oom_killed(name, spec, run, watch)
                engine_failed = not run.cancelled and self._engine_failed(name, run)
            finally:
                problem = self.remove(name, settle=run.cancelled)
                if problem is not None and not _never_reached(run, self.engine_error_codes):
                    control.warn(problem)
                    # an interrupted run must not end as a clean cancel while it may run on
                    left = f"container {name} (`{self.binary} rm -f {name}` removes it)"
        finally:
            if watch is not None:
                watch.close()
            stalled = stall is not None and stall.finish()
        result = interpret_run(
            run,
            engine=self.name,
            limits=spec.limits,
            oom_killed=True if stalled and not run.cancelled else oom_killed,
            signal_exit_codes=self.signal_exit_codes,
            engine_error_codes=self.engine_error_codes if engine_failed else frozenset(),
            program=invocation.argv[0] if invocation.argv else None,
        )
        if result.oom and stalled and stall is not None:
            result.reason = f"{result.reason}. {stall.account()}"
        if not run.cancelled and (result.returncode != 0 or self.binary != self.name):
            # a step of an orchestration function or a pystep, which prepare()
            # is not shown: the "engine" that failed it may be another program, and
            # one that "succeeded" too, if a configured binary answers 0 to all
            said = self.impostor()
            if said is not None:
                result.returncode = result.returncode or 1
                result.reason = said
        unseen = self._unseen_script(spec, result, engine_failed)
        if unseen is not None:
            result.reason = unseen
        replaced = None if run.cancelled else replaced_link(links)
        if replaced is not None and (result.returncode == 0 or result.reason is None):
            result.returncode = result.returncode or 1  # the tool's 0 cannot stand for it
            result.reason = replaced
        if left is not None and result.cancelled:
            result.details["still_running"] = left
        more = self.more_binds()
        result.visible = None if more is None else (*visible_paths(spec.mounts), *more)
        result.details["image"] = spec.image
        if spec.digest is not None:
            result.details["image_digest"] = spec.digest
        return result

    def _tool_stderr(self, run: BackendRun) -> BackendRun:
        """``run`` with its engine's own lines moved from ``stderr`` to
        ``engine_stderr``: wranglers read the tool's output, not the engine's."""
        tool, engine = split_engine_lines(run.stderr, self.engine_lines)
        if engine:
            run.stderr, run.engine_stderr = tool, engine
        return run

    def more_binds(self) -> tuple[str, ...] | None:
        """Host paths the step sees beyond ninja's own mounts, or None when ninja
        cannot know them all, so that core does not fail an output the step
        really wrote where the host sees it (``BackendRun.visible``). A bind the
        site added to ``run_flags`` (``-v /scratch:/scratch``) may show anything;
        so may what the engine's own configuration binds (:meth:`site_binds`)."""
        if binds_in(self.options.run_flags):
            return None
        with self._lock:
            if isinstance(self._site, _Unread):
                self._site = self.site_binds()
            return self._site

    def site_binds(self) -> tuple[str, ...] | None:
        """What the engine's site configuration binds into every container, or
        None when it binds what ninja cannot tell (or cannot be read). An
        engine with such a file reads it here; asked once per backend."""
        return ()

    # -- deciding one container --------------------------------------------------
    def spec(self, invocation: Invocation, *, pin: bool, ahead: bool = False) -> ContainerSpec:
        """The container for ``invocation``; raises a one-line refusal if there is none.

        ``ahead``: for a command line rendered before the run (see
        :func:`~shinobi_containers.mounts.plan_mounts`).
        """
        if not invocation.image:
            raise ContainerRefused(_no_image_message(invocation.step, self.name))
        mounts = _with_scripts(
            invocation,
            plan_mounts(
                invocation.paths,
                invocation.cwd,
                step=invocation.step,
                ahead=ahead,
                own_shm=self.own_shm,
            ),
        )
        self._refuse_unquotable(invocation, mounts)
        resources = invocation.resources
        declared = resources is not None and resources.declared
        mode = self.options.enforce_resources
        reach = self.cgroup_reach() if declared and mode != "never" else UNPROBED
        if mode == "always" and self.ignores_unenforceable_limits:
            self._refuse_unenforceable(invocation.step, limit_flags(resources, "auto", reach))
        limits = limit_flags(resources, mode, reach)
        if not ahead:
            limits = within_host(limits, len(os.sched_getaffinity(0)))
        if pin:
            image, digest = self._pinned(invocation)
            return ContainerSpec(invocation, image, mounts, limits, digest)
        return ContainerSpec(invocation, self.image_reference(invocation), mounts, limits)

    def _refuse_unquotable(self, invocation: Invocation, mounts: Sequence[Mount]) -> None:
        """A path the engine would garble (in a ``--mount`` record, or as UTF-8 text) is
        refused before the run, rather than mounting or naming another path, or failing
        with the engine's parse error."""
        found = unquotable_path(mounts, (*invocation.argv, invocation.cwd))
        if found is not None:
            path, why = found
            raise MountRefused(
                f"step {invocation.step!r}: {path!r} {why} {self.name} cannot carry (the"
                " container would see another path); rename that path, or run the step on"
                " the native backend"
            )

    def _refuse_unenforceable(self, step: str, possible: LimitFlags) -> None:
        """Under ``always``, a declared limit the engine cannot apply here is refused.

        Other engines refuse such a limit themselves, and the step fails saying
        so; rootless podman on cgroup v1 takes ``--memory`` and ignores it, so
        the step ran unlimited and passed while the setting promised it would
        fail.
        """
        for flag, why in possible.dropped.items():
            raise ContainerRefused(
                f"step {step!r}: {self.name} cannot enforce {flag} on this host ({why}), and"
                ' execution.enforce_resources is "always": run it where that cgroup'
                ' controller is delegated to you, or set it to "auto" to run without that limit'
            )

    def _pinned(self, invocation: Invocation) -> tuple[str, str]:
        """(what to run, the digest to report), resolved once per image per run."""
        key = self.image_reference(invocation)
        with self._lock:
            known = self._pins.get(key)
        if known is None:
            known = self.pin(invocation)
            with self._lock:
                self._pins[key] = known
        return known

    def _unseen_script(
        self, spec: ContainerSpec, result: BackendRun, engine_failed: bool
    ) -> str | None:
        """Why a step failed to start its program, when that program is a host file
        the container cannot see (see :mod:`~shinobi_containers.scripts`)."""
        if result.cancelled or result.oom or result.returncode == 0:
            return None
        invocation = spec.invocation
        return unseen_script_reason(
            invocation.argv,
            os.path.normpath(invocation.cwd),
            spec.mounts,
            LOCAL_HOST,
            engine=self.name,
            returncode=result.returncode,
            stderr=result.stderr,
            engine_failed=engine_failed,
        )

    def _engine_failed(self, name: str, run: BackendRun) -> bool:
        """Whether an exit code the engine uses for its own failures came from it.

        The payload may exit with the same number (a shell's 127 for a command
        it could not find, a C tool's ``exit(-1)``, which is 255): its own
        message must not be passed off as "{engine} could not run the step".
        """
        return run.returncode in self.engine_error_codes and self.payload_never_ran(name, run)

    def _stop(self, name: str, control: RunControl) -> None:
        """Stop the payload on interrupt as natively (SIGTERM, the run's grace, then
        SIGKILL), then remove the container; a failure is raised for core to report."""
        self.terminate(name, control.grace, control.hurry)
        problem = self.remove(name, settle=False)
        if problem is not None:
            raise ContainerStopFailed(problem)

    def reach_daemon(self) -> None:
        """Raise :class:`EngineUnreachable` when the engine's daemon does not answer.

        Nothing by default: only an engine with a daemon can be unreachable while
        its client is installed. Found before any step, the run ends at once
        (74) instead of failing its first container step mid-pipeline, or
        waiting for ever on a daemon that accepts and never answers.
        """

    def terminate(self, name: str, grace: float, hurry: threading.Event) -> None:
        """SIGTERM container ``name``'s payload and give it ``grace`` seconds (less
        once ``hurry`` is set). Nothing by default: a payload that is the client's
        own child gets SIGTERM and the grace from core's teardown."""
        del name, grace, hurry

    def _dropped_warnings(self, spec: ContainerSpec) -> dict[str, str]:
        """The warning about each declared limit ``spec`` will not run under, by flag:
        one this host cannot apply, or one a ``run_flags`` option replaces (the engine
        keeps the last of a flag given twice, and ``run_flags`` come after ninja's).
        Core reads them (``Rendered.warnings``) as limits left out, as they are."""
        said = {
            flag: dropped_warning(self.name, flag, why) for flag, why in spec.limits.dropped.items()
        }
        applied = {"memory": spec.limits.memory, "cpu": spec.limits.cpus}
        for flag, limit in limit_flags_in(self.options.run_flags, self.name).items():
            if applied[limit] is not None:
                said[f"run_flags {flag}"] = overridden_warning(self.name, flag, limit)
        return said

    def _new_warnings(self, spec: ContainerSpec) -> list[str]:
        """Warnings about dropped limits this backend has not given yet (one each per run)."""
        fresh = []
        with self._lock:
            for flag, warning in self._dropped_warnings(spec).items():
                if flag not in self._warned:
                    self._warned.add(flag)
                    fresh.append(warning)
        return fresh

    # -- what each engine spells its own way --------------------------------------
    @abstractmethod
    def command(self, spec: ContainerSpec, name: str) -> list[str]:
        """The complete engine command line that runs ``spec`` as container ``name``."""

    @abstractmethod
    def check_engine(self) -> Availability:
        """Whether the engine answers (the binary is known to exist), within seconds."""

    @abstractmethod
    def cgroup_reach(self) -> CgroupReach:
        """Which limits the engine can apply here (cached per process)."""

    @abstractmethod
    def pin(self, invocation: Invocation) -> tuple[str, str]:
        """(the image reference to run, its digest); raises ImageUnavailable."""

    def image_digest(self, image: str, cwd: str | None = None) -> str | None:
        """The digest the step cache keys on: a moved tag is not the old image.

        A relative image file (``tools/wsclean.sif``) is taken relative to the
        step's directory ``cwd`` (ninja's own when not given). Resolved against
        / it was never found, and a rebuilt image file under the same name
        served the old image's cached results.
        """
        try:
            here = cwd or os.getcwd()
            return self.pin(Invocation(step="cache-key", argv=(), cwd=here, image=image))[1]
        except ContainerRefused:
            return None

    def image_reference(self, invocation: Invocation) -> str:
        """The image as the engine should be told it, unpinned."""
        assert invocation.image is not None
        return invocation.image

    def client_variables(self, invocation: Invocation) -> dict[str, str]:
        """Variables the engine's CLI process needs on top of ninja's environment."""
        return {}

    def client_environment(self, invocation: Invocation) -> dict[str, str] | None:
        """The environment of the engine's CLI process (None: ninja's own)."""
        return None

    def remove(self, name: str, *, settle: bool) -> str | None:
        """Remove container ``name`` if the engine keeps it; ``settle``: the run was cut
        short, so make sure a container created in that instant is gone too.

        Returns None when nothing is left, else one line saying what may still run.
        """
        return None

    def payload_never_ran(self, name: str, run: BackendRun) -> bool:
        """Whether container ``name`` failed before its payload started (asked only
        for an exit code the engine also uses for its own failures)."""
        return True

    def watch_for_oom(self, spec: ContainerSpec) -> OomWatch | None:
        """Start watching the kernel for out-of-memory kills, if this engine needs to."""
        return None

    def watch_for_stall(self, spec: ContainerSpec) -> StallWatch | None:
        """A watchdog for a step stuck at its memory limit, where the engine's
        payload can be found and killed from here (see :mod:`stall`)."""
        return None

    def oom_killed(
        self, name: str, spec: ContainerSpec, run: BackendRun, watch: OomWatch | None
    ) -> bool | None:
        """Whether the container lost a process to the out-of-memory killer (None: unknown).

        Asked even when the container exited 0: a main process that survives
        the kill of its worker does not make the step's product whole.
        """
        return None


#: Options of ``run``/``exec`` that show the step more of the host (docker and
#: podman's, apptainer's), in any spelling: ``-v X``, ``-vX``, ``--volume=X``.
#: How many steps without an image one refusal names before "and N more".
_IMAGELESS_NAMED = 10


def _declared_steps(names: Sequence[str]) -> list[str]:
    """``names`` once per declared step: a slice (``solve[3]``) as its step, and the
    cycles of a loop (``selfcal.1.image``, ``selfcal.2.image``) as ``selfcal.*.image``.
    The fix is one cab's image each; listing every slice and cycle buried them."""
    steps = list(dict.fromkeys(unsliced(name) for name in names))
    cycles = Counter(_CYCLE.sub(".*.", step) for step in steps)
    return list(dict.fromkeys(_any_cycle(step, cycles) for step in steps))


def _any_cycle(step: str, cycles: Counter[str]) -> str:
    """``step`` with its cycle number as ``*`` when another cycle of it is there too."""
    pattern = _CYCLE.sub(".*.", step)
    return pattern if cycles[pattern] > 1 else step


#: A loop's cycle number inside a step's name (``selfcal.2.image``).
_CYCLE = re.compile(r"\.\d+\.")


def _no_image_message(step: str, engine: str) -> str:
    return (
        f"step {step!r} names no image, so the {engine} backend cannot run it: give its"
        " cab an image, or choose a backend such as native for it"
    )


_BIND_OPTIONS = ("--volume", "--mount", "--volumes-from", "--bind")
_BIND_SHORT = ("-v", "-B")


def binds_in(flags: Sequence[str]) -> bool:
    """Whether ``flags`` (a backend's ``run_flags``) bind anything of the host."""
    return any(f.split("=", 1)[0] in _BIND_OPTIONS or f[:2] in _BIND_SHORT for f in flags)


def visible_paths(mounts: Sequence[Mount]) -> tuple[str, ...]:
    """What of the host the step saw, for core's check of the outputs it names
    (``BackendRun.visible``): each mount at its path in the container, which is
    the host's (identity mounts), and the devices every container has itself."""
    return (*(mount.target for mount in mounts), *sorted(CONTAINER_DEVICES))


def _with_scripts(invocation: Invocation, mounts: tuple[Mount, ...]) -> tuple[Mount, ...]:
    """``mounts`` plus the command's own project script where nothing shows it, so the
    container runs the file the cab names, as natively; parents stay first."""
    cwd = os.path.normpath(invocation.cwd)
    extra = script_mounts(invocation.argv, cwd, mounts, LOCAL_HOST)
    if not extra:
        return mounts
    return tuple(sorted([*mounts, *extra], key=lambda m: (m.target.count("/"), m.target)))


#: How an engine client says it could not talk to its daemon at all.
_UNREACHABLE = (
    "cannot connect to the docker daemon",
    "permission denied while trying to connect",
    "cannot connect to podman",  # podman --remote, or CONTAINER_HOST, with no service there
    "unable to connect to podman socket",
)


def _never_reached(run: BackendRun, engine_errors: frozenset[int]) -> bool:
    """Whether ``run`` failed before any daemon heard of its container.

    Then no container can be left to remove, and the removal, failing for the
    same reason, must not warn that one "may still be running".
    """
    said = run.stderr.lower()
    return run.returncode in engine_errors and any(text in said for text in _UNREACHABLE)


def stray_space(name: str) -> str | None:
    """Where image ``name`` has whitespace ("a trailing space"), or None. No image
    reference can hold any, so an engine could only fail on such a name."""
    spaces = [i for i, c in enumerate(name) if c.isspace()]
    if not spaces:
        return None
    at = 0 if spaces[0] == 0 else len(name) - 1 if spaces[-1] == len(name) - 1 else spaces[0]
    kind = "a space" if name[at] == " " else f"whitespace ({name[at]!r})"
    where = "at its start" if at == 0 else "at its end" if at == len(name) - 1 else "inside it"
    return f"{kind} {where}"


def spaced_reference(step: str, image: str) -> str | None:
    """The refusal of an image reference holding whitespace (see :func:`stray_space`),
    one line naming the step and the fix; None when it holds none."""
    spaced = stray_space(image)
    if spaced is None:
        return None
    return (
        f"step {step!r}: image {image!r} is not a valid reference: it has {spaced}, and a"
        " reference has none; remove it"
    )


def _starts_with(lines: list[str] | None, words: tuple[str, ...]) -> bool:
    """Whether one of ``lines`` (a ``--version`` answer) starts with one of ``words``."""
    return any(line.lower().startswith(words) for line in lines or ())
