"""The apptainer backend, and singularity: the same backend under the former name.

Apptainer runs the payload as the invoking user and as a descendant of the
client, so ending the client's session ends the container: there is nothing
to remove. ``--contain`` keeps apptainer from sharing the home directory,
/tmp and the working directory on its own, so what the step sees is exactly
what its cab declares; ``--cleanenv`` keeps ninja's environment out, as
docker and podman do. The step's own variables travel as
``APPTAINERENV_<NAME>`` (``SINGULARITYENV_`` for singularity), which no
option parsing can split; ``HOME``, which apptainer refuses to take that way,
goes as ``--home``.
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import ClassVar

from shinobi.backends.base import Availability, BackendRun, Invocation
from shinobi_containers.cgroups import PROBE_COMMAND, CgroupReach, apptainer_reach
from shinobi_containers.cli import CliAnswer, call
from shinobi_containers.digest import sif_digest
from shinobi_containers.engine import (
    CHECK_TIMEOUT,
    ContainerBackend,
    ContainerSpec,
    spaced_reference,
    stray_space,
)
from shinobi_containers.engine_lines import APPTAINER_LINES
from shinobi_containers.errors import ContainerRefused, ImageUnavailable
from shinobi_containers.mounts import mount_option
from shinobi_containers.oom import OomWatch
from shinobi_containers.stall import StallWatch

#: What a shell takes as a variable's name (apptainer's environment goes through one).
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

__all__ = ["ApptainerBackend", "SingularityBackend"]

#: How image files are named: a name ending so is a file, never a registry's.
_FILES = (".sif", ".simg", ".img")
#: Apptainer's URIs written without ``//``: a local docker's image, an archive,
#: an OCI layout. Taken for a registry's name, they became ``docker://docker-daemon:...``.
_TRANSPORTS = ("docker-daemon:", "docker-archive:", "oci:", "oci-archive:")


#: Variables that bind more of the host into every container apptainer runs.
_BIND_VARIABLES = (
    "APPTAINER_BIND",
    "APPTAINER_BINDPATH",
    "SINGULARITY_BIND",
    "SINGULARITY_BINDPATH",
)
_BIND_PATH = re.compile(r"^\s*bind path\s*=\s*(\S+)\s*$")


def configured_binds(binary: str) -> tuple[str, ...] | None:
    """The container paths the configuration file's ``bind path`` lines show
    (``SRC`` or ``SRC:DEST``), from the file ``BINARY buildcfg`` names; None if
    it cannot be found or read."""
    answer = call([binary, "buildcfg"], timeout=CHECK_TIMEOUT)
    if answer.returncode != 0:
        return None
    names = [
        line.split("=", 1)[1].strip()
        for line in answer.stdout.splitlines()
        if line.split("=", 1)[0].endswith("_CONF_FILE")
    ]
    if not names:
        return None
    try:
        with open(names[0], encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    found = (_BIND_PATH.match(line) for line in lines)
    return tuple(
        parts[1] if len(parts) > 1 else parts[0]
        for m in found
        if m
        for parts in [m.group(1).split(":")]
    )


class ApptainerBackend(ContainerBackend):
    """Runs each step's image (a SIF file, or any URI apptainer accepts) with ``exec``."""

    name = "apptainer"
    version_words: ClassVar[tuple[str, ...]] = ("apptainer",)
    engine_lines = APPTAINER_LINES
    engine_error_codes: ClassVar[frozenset[int]] = frozenset({255})
    environment_prefix: ClassVar[str] = "APPTAINERENV_"
    #: In a job, apptainer's own ``--memory`` moved the payload into a cgroup of its
    #: own, out of the job's: Slurm then saw none of its memory, and a worker the
    #: limit killed went unrecorded (the job read "completed"). Left in the job's
    #: cgroup, the job's ``--mem`` limits it and sacct says OUT_OF_MEMORY.
    limits_in_jobs: ClassVar[bool] = False
    own_shm = True  # --contain: "Skipping /dev/shm bind mount: already mounted"

    def command(self, spec: ContainerSpec, name: str) -> list[str]:
        del name  # apptainer exec has no container names; the session is the handle
        invocation = spec.invocation
        argv = [self.binary, "exec", "--contain", "--cleanenv"]
        argv += ["--pwd", os.path.normpath(invocation.cwd)]
        if invocation.env.get("HOME"):  # apptainer takes only an absolute one
            argv += [
                "--home",
                os.path.join(os.path.normpath(invocation.cwd), invocation.env["HOME"]),
            ]
        for mount in spec.mounts:
            argv += ["--mount", mount_option(mount)]
        argv += spec.limits.flags
        argv += self.options.run_flags
        return [*argv, spec.image, *invocation.argv]

    def more_binds(self) -> tuple[str, ...] | None:
        """Besides ``run_flags`` and the site's file: a ``--bind`` variable may
        show any of the host (looked at on every run: the caller's environment)."""
        if any(os.environ.get(v) for v in _BIND_VARIABLES):
            return None
        return super().more_binds()

    def site_binds(self) -> tuple[str, ...] | None:
        """The configuration file's ``bind path = ...`` lines, applied even with
        ``--contain``; None when the file cannot be read."""
        return configured_binds(self.binary)

    def idle_settings(self) -> list[str]:
        """The docker/podman settings that would change a step here: ``network``
        (apptainer steps share the host's) and ``run_as_host_user = false`` (they
        always run as the invoking user). The latter may be the global key, set
        for docker: it is said anyway, as the step does not run as it says."""
        said = []
        if self.options.network is not None:
            said.append(
                f"backend.{self.name}.network = {self.options.network!r} does nothing here:"
                f" {self.name} steps share the host's network (it is a docker/podman"
                " setting); drop it, or run these steps on docker or podman"
            )
        if not self.options.run_as_host_user:
            said.append(
                f"run_as_host_user = false does nothing for {self.name}: its steps always"
                " run as the invoking user (it is a docker/podman setting); set it in"
                " [backend.docker] or [backend.podman] only"
            )
        return said

    def image_reference(self, invocation: Invocation) -> str:
        """A local file as an absolute path, a URI as is, any other name from a registry.

        A name written as a file (a path, or ``*.sif``) that is not there is a
        missing file, not a registry name: ``docker:///data/img.sif`` would
        send the user to a registry lookup that can only fail, far from the
        typo.
        """
        image = super().image_reference(invocation)
        if image.startswith(_TRANSPORTS):
            return image  # a path follows, which may hold spaces
        if "://" in image:
            return self._no_stray_space(invocation.step, image)
        path = os.path.normpath(os.path.join(invocation.cwd, image))
        if os.path.isdir(path) and not _root_filesystem(path):
            raise ImageUnavailable(
                f"step {invocation.step!r}: the image {path} is a directory but no container's"
                " root filesystem (it has"
                " no .singularity.d, bin or usr); name a SIF file, a sandbox (`apptainer build"
                " --sandbox`) or a registry image"
            )
        if os.path.exists(path):
            return path
        if os.path.isabs(image) or image.rstrip().startswith(("./", "../")) or _named_file(image):
            raise ImageUnavailable(
                f"step {invocation.step!r}: the image file {path} does not exist; check the path"
                f"{_spaced_hint(image)} (an image from a"
                " registry is named without one: ubuntu:22.04 or docker://ubuntu:22.04)"
            )
        return f"docker://{self._no_stray_space(invocation.step, image)}"

    def _no_stray_space(self, step: str, image: str) -> str:
        """``image`` (a URI, or a registry's name), refused before the run if it holds
        whitespace, which no reference can: apptainer would fail on it mid-run. A
        file's name may hold spaces, and is not asked."""
        refused = spaced_reference(step, image)
        if refused is not None:
            raise ImageUnavailable(refused)
        return image

    def spec(self, invocation: Invocation, *, pin: bool, ahead: bool = False) -> ContainerSpec:
        """As every engine's, but a variable apptainer cannot hand in is refused first
        (before any step, from ``prepare``): its shell reads ``APPTAINERENV_*`` back in
        a script that stops at a name that is no shell identifier (``OMP-THREADS``),
        and every variable of the cab after it was lost, the step ran without them."""
        bad = next((k for k in invocation.env if not _SHELL_NAME.fullmatch(k)), None)
        if bad is not None:
            raise ContainerRefused(
                f"step {invocation.step!r}: the variable {bad!r} cannot reach an {self.name}"
                " container (apptainer hands variables in through a shell, which takes only"
                " names of letters, digits and _ not starting with a digit); rename it, or"
                " run this step on docker, podman or native"
            )
        if ":" in invocation.env.get("HOME", ""):  # --home reads SRC:DEST
            raise ContainerRefused(
                f"step {invocation.step!r}: the cab's HOME {invocation.env['HOME']!r} holds a"
                f" ':', which {self.name}'s --home reads as SOURCE:DESTINATION; give HOME a"
                " folder whose path has no ':'"
            )
        return super().spec(invocation, pin=pin, ahead=ahead)

    def client_variables(self, invocation: Invocation) -> dict[str, str]:
        """The cab's environment as apptainer hands it into a ``--cleanenv`` container.

        ``HOME`` is the exception: apptainer ignores ``APPTAINERENV_HOME`` (it
        only warns, and the tool ran with the default home), so it goes as
        ``--home`` instead (see :meth:`command`).
        """
        prefix = self.variable_prefix()
        return {prefix + k: _verbatim(v) for k, v in invocation.env.items() if k != "HOME"}

    def variable_prefix(self) -> str:
        """The prefix of the variables that reach the container (see subclasses)."""
        return self.environment_prefix

    def client_environment(self, invocation: Invocation) -> dict[str, str] | None:
        if not invocation.env:
            return None
        return {**os.environ, **self.client_variables(invocation)}

    def pin(self, invocation: Invocation) -> tuple[str, str]:
        image = self.image_reference(invocation)
        if not os.path.isfile(image):
            raise ImageUnavailable(
                f"{self.name} can pin only a local image file, not"
                f" {image!r}; build one (`{self.binary} build image.sif {image}`) and name"
                " that file as the image"
            )
        try:
            return image, sif_digest(image)
        except OSError as exc:  # unreadable to this user: its digest cannot be taken
            raise ImageUnavailable(
                f"cannot read the image file {image} to pin it ({exc.strerror or exc}); make"
                f" it readable (`chmod a+r {image}`), or copy it somewhere this user can read"
            ) from None

    def check_engine(self) -> Availability:
        """The version, once the engine has shown it can start a container here.

        ``--version`` alone answers on a host where every container fails (no
        user namespaces for an unprivileged user, a configuration asking for
        capabilities the host withholds), and ``ninja backends`` said "ok"
        there. So a throwaway container is started from an empty directory:
        it fails on its missing command only if it got that far.
        """
        answer = call([self.binary, "--version"], CHECK_TIMEOUT)
        if not answer.ok:
            return Availability(False, f"{self.binary} does not run: {answer.last_line()}")
        with tempfile.TemporaryDirectory(prefix="shinobi-check-") as sandbox:
            probe = call([self.binary, "exec", sandbox, PROBE_COMMAND], CHECK_TIMEOUT)
        if PROBE_COMMAND not in probe.stderr:
            return Availability(
                False, f"{self.binary} cannot start a container here: {_complaint(probe)}"
            )
        return Availability(True, answer.stdout.strip())

    def cgroup_reach(self) -> CgroupReach:
        return apptainer_reach(self.binary, os.geteuid())

    def payload_never_ran(self, name: str, run: BackendRun) -> bool:
        """Apptainer says its own failures on a ``FATAL:`` line; a payload's 255
        (``exit(-1)``) comes without one."""
        del name
        return "FATAL:" in run.stderr

    def watch_for_oom(self, spec: ContainerSpec) -> OomWatch | None:
        """Apptainer names the cgroup after a pid gone by the time the log is read, so
        a kill counts only for a run no other memory-limited apptainer run overlapped."""
        return OomWatch(sole_kind="apptainer") if spec.limits.memory is not None else None

    def watch_for_stall(self, spec: ContainerSpec) -> StallWatch | None:
        """The payload is the client's descendant, in a cgroup of its own: it can
        be watched, and killed, from here."""
        window = self.options.memory_stall_timeout
        return StallWatch(window) if spec.limits.memory is not None and window > 0 else None

    def oom_killed(
        self, name: str, spec: ContainerSpec, run: BackendRun, watch: OomWatch | None
    ) -> bool | None:
        kills = watch.kills() if watch is not None else None
        if kills is None:
            return None
        euid = os.geteuid()
        return any(kill.uid == euid and _apptainer_cgroup(kill.memcg) for kill in kills)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _named_file(image: str) -> bool:
    """Whether ``image`` is named as an image file (``*.sif``), a stray space after it too."""
    return image.rstrip().endswith(_FILES)


def _spaced_hint(image: str) -> str:
    """A note on whitespace around ``image``, which the path in a message hides."""
    spaced = stray_space(image) if image != image.strip() else None
    return f": {image!r} has {spaced}" if spaced else ""


def _root_filesystem(path: str) -> bool:
    """Whether the directory ``path`` may be a sandbox apptainer runs: apptainer's
    own mark, or at least the top of a root filesystem."""
    return any(os.path.isdir(os.path.join(path, part)) for part in (".singularity.d", "bin", "usr"))


def _complaint(answer: CliAnswer) -> str:
    """Apptainer's own last ``FATAL``/``ERROR`` line, without its colours."""
    lines = [_ANSI.sub("", line).strip() for line in answer.stderr.splitlines()]
    said = [line for line in lines if line.startswith(("FATAL", "ERROR"))]
    return said[-1][:300] if said else answer.last_line()


def _apptainer_cgroup(memcg: str) -> bool:
    """``/apptainer/<pid>`` (cgroupfs) or ``.../apptainer-<pid>.scope`` (systemd)."""
    return any(part.startswith(("apptainer", "singularity")) for part in memcg.split("/"))


class SingularityBackend(ApptainerBackend):
    """Apptainer under its former name, for sites that install only ``singularity``."""

    name = "singularity"
    version_words: ClassVar[tuple[str, ...]] = ("singularity", "apptainer")
    environment_prefix: ClassVar[str] = "SINGULARITYENV_"
    _prefix: str | None = None

    def variable_prefix(self) -> str:
        """``SINGULARITYENV_`` for SingularityCE; ``APPTAINERENV_`` where ``singularity``
        is apptainer under its old name, which takes the old prefix but notes, in
        every step's log, that the new one is preferred."""
        if self._prefix is None:
            apptainer = self.answers_as(ApptainerBackend.version_words)
            self._prefix = (
                ApptainerBackend.environment_prefix if apptainer else self.environment_prefix
            )
        return self._prefix


def _verbatim(value: str) -> str:
    """``value`` escaped so the container sees it exactly as written.

    Apptainer writes ``APPTAINERENV_`` values into a script the container's
    shell evaluates inside double quotes: ``$(...)``, backticks and ``$HOME``
    would be expanded and a backslash eaten. Escaping the backslash, ``$``
    and the backtick (a double quote passes as it is) leaves the value alone.
    """
    return value.replace("\\", "\\\\").replace("$", "\\$").replace("`", "\\`")
