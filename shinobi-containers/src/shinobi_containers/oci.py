"""The docker-compatible CLIs (docker and podman): how a run is spelled and undone.

The container runs attached (``run`` without ``-d``), so its stdout and stderr
arrive on the client's, and those go straight to the step's logs. A step that
ninja runs is not started with ``--rm``: after a failure the engine is asked
whether it killed the container for memory, and then the container is removed
explicitly. A rendered command (a compiled job's) has ``--rm``: nothing else
would remove it.
Containers are owned by containerd-shim or conmon rather than by the client,
so stopping the client is not enough; every container is named, and removed
by name when the run is interrupted. A ninja killed outright removes nothing:
each container's name goes into the run's ledger before it starts
(``<run folder>/docker/jobs.tsv``), so the next run in the workdir refuses to
start beside one still running, as beside a killed run's tools or Slurm jobs.
"""

from __future__ import annotations

import math
import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from shinobi.backends.base import BackendRun, Invocation, RunControl
from shinobi.local_runs import JOBS_LEDGER, note_in_ledger
from shinobi_containers.cli import call
from shinobi_containers.digest import oci_image_reference
from shinobi_containers.engine import ContainerBackend, ContainerSpec, spaced_reference
from shinobi_containers.errors import ContainerRefused
from shinobi_containers.mounts import mount_option

__all__ = ["OciBackend"]

#: Seconds to wait for ``rm -f`` (it kills, so this is generous).
REMOVE_TIMEOUT = 60.0
#: Seconds the engine gets to SIGKILL a payload after a second interrupt: the
#: user asked for it now, and the removal that follows tries again anyway.
HURRIED_KILL_TIMEOUT = 2.0
#: Seconds an interrupted run keeps checking for a container created as it was cut.
SETTLE_SECONDS = 3.0


class OciBackend(ContainerBackend):
    """Shared by docker and podman, which accept the same ``run`` options."""

    engine_error_codes: ClassVar[frozenset[int]] = frozenset({125, 126, 127})
    signal_exit_codes: ClassVar[bool] = True
    #: How this engine force-removes a container without waiting for it.
    remove_command: ClassVar[tuple[str, ...]] = ("rm", "-f")
    ledger_noun: ClassVar[str] = "container"

    def note_started(self, invocation: Invocation, name: str, control: RunControl) -> None:
        """List the container in the run's ledger before it exists: a killed ninja
        leaves it running, owned by the engine's daemon, not by any process of the run."""
        if invocation.scratch_dir:
            ledger = Path(invocation.scratch_dir) / self.name / JOBS_LEDGER
            note_in_ledger(ledger, name, invocation.step, control.warn, self.ledger_noun)

    def live_jobs(self, listed: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
        """One ``ps`` for the containers of every run given: those still running
        (or paused, or restarting), found by name among the engine's shinobi ones."""
        answer = call(
            [self.binary, "ps", "--filter", "label=shinobi.run", "--format", "{{.Names}}"],
            REMOVE_TIMEOUT,
        )
        if not answer.ok:
            raise ContainerRefused(f"`{self.binary} ps` failed: {answer.last_line()}")
        running = set(answer.stdout.split())
        return {run: [name for name in names if name in running] for run, names in listed.items()}

    def jobs_stop_command(self, job_ids: Sequence[str]) -> str | None:
        return " ".join([self.binary, *self.remove_command, *job_ids])

    def command(self, spec: ContainerSpec, name: str) -> list[str]:
        invocation = spec.invocation
        argv = [self.binary, "run", "--name", name]
        argv += ["--label", f"shinobi.run={invocation.run_id}"]
        argv += ["--label", f"shinobi.step={invocation.step}"]
        if self.options.init:
            argv.append("--init")
        if self.options.network:
            argv += ["--network", self.options.network]
        if self.options.run_as_host_user:
            argv += self.user_options()
        argv += ["--workdir", os.path.normpath(invocation.cwd)]
        for mount in spec.mounts:
            argv += ["--mount", mount_option(mount)]
        for key, value in invocation.env.items():
            argv += ["--env", f"{key}={value}"]
        argv += spec.limits.flags
        argv += self.options.run_flags
        return [*argv, spec.image, *invocation.argv]

    def idle_settings(self) -> list[str]:
        """``memory_stall_timeout`` is apptainer's: the watch follows the client's
        descendants, and docker and podman run the payload outside them."""
        if "memory_stall_timeout" not in self.settings:
            return []
        value = self.settings["memory_stall_timeout"]
        return [
            f"backend.{self.name}.memory_stall_timeout = {value!r} does nothing here:"
            f" {self.name} runs its containers outside ninja's process tree, where it"
            " cannot watch them (it is an apptainer/singularity setting); drop it"
        ]

    def oom_probe_command(self, name: str) -> list[str]:
        """``OOMKilled`` of container ``name``: a compiled job asks it once its payload
        ended, then removes the container (no ``--rm``, which would throw the
        answer away: a worker killed for memory left its main process to exit 0,
        and the job read "completed")."""
        return [self.binary, "inspect", "--format", "{{.State.OOMKilled}}", name]

    def stop_command(self, name: str) -> list[str]:
        return [self.binary, *self.remove_command, name]

    def user_options(self) -> list[str]:
        """Run as the invoking user and groups, so what the step writes is theirs."""
        uid, gid = os.getuid(), os.getgid()
        options = ["--user", f"{uid}:{gid}"]
        for group in sorted(set(os.getgroups()) - {gid}):
            options += ["--group-add", str(group)]
        return options

    def image_reference(self, invocation: Invocation) -> str:
        """The image as named, refused before any step runs where docker and podman
        could only fail on it (with "invalid reference format" and no fix), or would
        take it for one of their own options (a name starting with ``-``)."""
        image = super().image_reference(invocation)
        refused = spaced_reference(invocation.step, image)
        if refused is not None:
            # easy to get from a config value or an f-string; the engine said only
            # "invalid reference format", after the step had started
            raise ContainerRefused(refused)
        if image.startswith("-"):
            # before the command on `run`'s line, it was read as an option: `--help`
            # printed usage and exited 0, and the step passed having run nothing
            raise ContainerRefused(
                f"step {invocation.step!r}: image {image!r} starts with '-', which {self.name}"
                f" would read as an option of `{self.name} run`, not as the image; name an"
                f" image {self.name} has (`{self.name} images`)"
            )
        if image.endswith((".sif", ".simg")) or image.startswith(("/", "./", "../")):
            raise ContainerRefused(
                f"step {invocation.step!r}: image {image!r} names a file (a SIF image?), which"
                f" {self.name} cannot run: run it with apptainer (`ninja run --backend"
                " apptainer`, `ninja compile --container-runtime apptainer`), or name an"
                f" image {self.name} has (`{self.name} images`)"
            )
        name = image.split("@", 1)[0]
        path = name.split("/")
        if len(path) > 1 and ("." in path[0] or ":" in path[0] or path[0] == "localhost"):
            path = path[1:]  # a registry host: its own rules
        path[-1] = path[-1].split(":", 1)[0]  # the tag may have capitals
        if any(part != part.lower() for part in path):
            raise ContainerRefused(
                f"step {invocation.step!r}: image {image!r} is not a valid reference: a"
                " repository name must be lowercase (only a tag may have capitals)"
            )
        return image

    def pin(self, invocation: Invocation) -> tuple[str, str]:
        reference = oci_image_reference(self.binary, self.name, self.image_reference(invocation))
        return reference, reference

    def payload_never_ran(self, name: str, run: BackendRun) -> bool:
        """A container the engine never started (or never created) ran nothing:
        ``State.StartedAt`` stays at the zero time when create or start fails."""
        del run
        answer = call(
            [self.binary, "inspect", "--format", "{{.State.StartedAt}}", name], REMOVE_TIMEOUT
        )
        return not answer.ok or answer.stdout.strip().startswith("0001-01-01")

    def terminate(self, name: str, grace: float, hurry: threading.Event) -> None:
        """``stop -t GRACE``: the engine sends the payload SIGTERM (through
        ``--init`` to the tool), waits, then SIGKILLs it, as a native step is
        stopped. A second interrupt (``hurry``) cuts the wait short: the removal
        that follows kills at once."""
        argv = [self.binary, "stop", "-t", str(math.ceil(grace)), name]
        try:
            client = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # the user's Ctrl-C is ninja's to handle
            )
        except OSError:
            return  # the removal below says what is wrong with the engine
        deadline = time.monotonic() + grace + REMOVE_TIMEOUT
        while client.poll() is None:
            if hurry.wait(0.1) or time.monotonic() > deadline:
                client.kill()
                client.wait()
                # The engine's stop is cut off half way: SIGKILL the payload through
                # the engine itself. podman's `rm -f` of a container left "stopping"
                # removes its record while conmon keeps the payload running.
                call([self.binary, "kill", "--signal", "KILL", name], HURRIED_KILL_TIMEOUT)
                return

    def remove(self, name: str, *, settle: bool) -> str | None:
        problem = self._remove_once(name)
        if problem is not None or not settle:
            return problem
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            listed = call([self.binary, "ps", "-aq", "--filter", f"name=^{name}$"], REMOVE_TIMEOUT)
            if not listed.ok:
                return f"cannot tell whether container {name} is gone: {listed.last_line()}"
            if not listed.stdout.strip():
                return None
            problem = self._remove_once(name)
            if problem is not None:
                return problem
            time.sleep(0.2)
        return f"container {name} is still listed after removal; check `{self.binary} ps -a`"

    def _remove_once(self, name: str) -> str | None:
        answer = call([self.binary, *self.remove_command, name], REMOVE_TIMEOUT)
        if answer.ok or "no such container" in answer.stderr.lower():
            return None
        command = " ".join([self.binary, *self.remove_command, name])
        return (
            f"container {name} may still be running: `{command}` failed"
            f" ({answer.last_line()}); remove it by hand"
        )
