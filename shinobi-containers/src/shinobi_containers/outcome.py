"""Reading what a container run's exit says: out of memory, a signal, a refused limit.

A container runtime reports its payload's death as an exit code: 137 for
SIGKILL, 128+N for signal N (docker and podman, whose --init reports the
signal that way; apptainer's client dies of it, and is recorded the same way,
so one recipe gives one record on every engine). Those numbers alone do not
tell the user what happened, so they are turned into the account the rest of
shinobi reads: ``oom`` with a reason, a ``signal`` number, or the cause and
remedy of a limit the runtime could not apply.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal

from shinobi.backends.base import BackendRun
from shinobi.resources import format_size
from shinobi_containers.errors import DOCKER_DAEMON_FIX
from shinobi_containers.limits import LimitFlags

__all__ = ["enforcement_reason", "interpret_run", "oom_reason"]

_KILLED = 128 + signal.SIGKILL
#: What podman's init (catatonit) says when the command is not in the image.
_NO_PROGRAM = "failed to exec pid1: No such file or directory"
#: ... and when it is there but may not be executed (a script without its x bit).
_NOT_EXECUTABLE = "failed to exec pid1: Permission denied"
#: What docker's init (tini) says then, naming the program.
_TINI_NO_PROGRAM = re.compile(
    r"\[FATAL tini \(\d+\)\] exec (.+?) failed: (No such file or directory|Permission denied)"
)
#: What apptainer says when the command is not in the image, naming it.
_APPTAINER_NO_PROGRAM = re.compile(r'FATAL:\s+"(.+?)": executable file not found in \$PATH')
_MAX_SIGNAL = 64


def _missing_program(stderr: str, program: str | None) -> str | None:
    """Why the container's init could not start the command, if it said so;
    ``program`` is the command the step runs, for an engine that does not name it."""
    if _NO_PROGRAM in stderr:  # podman's catatonit names no program
        return _not_in_image(program)
    if _NOT_EXECUTABLE in stderr:
        return _not_executable(program)
    tini = _TINI_NO_PROGRAM.search(stderr)
    if tini is not None and tini.group(2) == "Permission denied":
        return _not_executable(tini.group(1))
    found = tini or _APPTAINER_NO_PROGRAM.search(stderr)
    return None if found is None else _not_in_image(found.group(1))


_DENIED = "permission denied:"


def _not_executable(program: str | None) -> str:
    """A program that is there and may not be executed: most often a script of the
    user's without its x bit, which "not in the image" sent looking for it."""
    shown = "the step's command" if program is None else repr(program)
    fix = f" (`chmod +x {program}`)" if program is not None else ""
    return f"{_DENIED} {shown} is not executable; if it is a script of yours, make it so{fix}"


def _not_in_image(program: str | None) -> str:
    if program is None:
        return "it is not in the image (or not executable there)"
    hint = ""
    if os.path.basename(program).startswith("python"):
        hint = " (a @pystep runs in its image with that image's python3: use one that has it)"
    return f"{program!r} is not in the image (or not executable there){hint}"


def oom_reason(engine: str, memory: int | None) -> str:
    if memory is None:
        return "killed: out of memory (the host ran out; no memory limit was declared)"
    return (
        f"killed: out of memory: the step used more than the {format_size(memory)} it"
        f" declares ({engine} --memory); declare more memory for it"
    )


def _cause(stderr: str) -> str:
    text = stderr.lower()
    if "unified mode" in text or "cgroups v2" in text:
        return (
            "limits for an unprivileged user need cgroups v2 in unified mode, which this host lacks"
        )
    named = [c for c in ("cpu", "memory") if f"{c}." in text or f"{c} " in text]
    if named:
        return f"the {' and '.join(named)} cgroup controller is not available to this user"
    return "its cgroup setup refused them"


def enforcement_reason(engine: str, limits: LimitFlags, stderr: str) -> str:
    flags = " ".join(f for f in limits.flags if f.startswith("--"))
    return (
        f"{engine} could not apply the declared limits ({flags}) on this host: {_cause(stderr)}."
        ' Set execution.enforce_resources = "auto" to run with only the limits this host can'
        " enforce, or have the missing cgroup controllers delegated to your user (cgroups v2"
        " with systemd)"
    )


#: How runc says the kernel refused a limit's value (not its controller).
_BAD_VALUE = ("invalid argument", "unable to set memory limit")
#: How the engines themselves refuse a value out of their range (no cgroup named):
#: docker's memory floor and CPU count, apptainer's cpus, podman's CPU quota.
_OUT_OF_RANGE = (
    "minimum memory limit allowed",
    "range of cpus is from",
    "must be in range",
    "cfs quota cannot be less than",
)


def _value_refused(stderr: str) -> bool:
    """Whether the runtime could set limits here but not these values: a memory
    limit below what the container already uses, a CPU quota under a millisecond."""
    text = stderr.lower()
    if any(words in text for words in _OUT_OF_RANGE):
        return True
    return "cgroup" in text and any(words in text for words in _BAD_VALUE)


#: How the engines name the limit whose value they refused: runc the cgroup file it
#: could not write, docker, podman and apptainer their own range.
_REFUSED_LIMIT = {
    "--cpus": ("cpu.cfs_", "cpu.max", "range of cpus", "cpus value", "cfs quota"),
    "--memory": ("memory",),
}
_REMEDY = {
    "--cpus": "Declare at least 0.01 cpus",
    "--memory": "Declare a memory above what the tool needs just to start",
}


def _refused_flag(limits: LimitFlags, stderr: str) -> str | None:
    """The one declared limit the engine's words name, or None when they name none
    of them (or both): the remedy should be about the limit that was refused."""
    text = stderr.lower()
    named = [
        flag
        for flag, words in _REFUSED_LIMIT.items()
        if flag in limits.flags and any(word in text for word in words)
    ]
    return named[0] if len(named) == 1 else None


def value_reason(engine: str, limits: LimitFlags, stderr: str) -> str:
    """The account of limits whose values, not whose kind, the host refused.

    Blaming cgroup delegation here would send the user to change settings
    that are fine, and ``enforce_resources = "auto"`` would not help either.
    """
    flags = " ".join(limits.flags)
    said = engine_message(stderr)
    flag = _refused_flag(limits, stderr)
    if flag is not None:
        value = limits.flags[limits.flags.index(flag) + 1]
        return (
            f"{engine} refused the value of the declared limit {flag} {value}: {said}."
            f" {_REMEDY[flag]}"
        )
    return (
        f"{engine} refused the values of the declared limits ({flags}): {said}. Declare"
        " a memory above what the tool needs just to start, and at least 0.01 cpus"
    )


#: What apptainer's starter says of a command line and mounts it cannot hold
#: ("FATAL: ... engine configuration too big > 1048448").
_TOO_BIG = "engine configuration too big"


def interpret_run(
    run: BackendRun,
    *,
    engine: str,
    limits: LimitFlags,
    oom_killed: bool | None = None,
    signal_exit_codes: bool = False,
    engine_error_codes: frozenset[int] = frozenset(),
    program: str | None = None,
) -> BackendRun:
    """``run`` with ``oom``, ``signal`` and ``reason`` filled in from how it ended.

    ``program`` is the command the step runs in the container (``argv[0]``).

    ``oom_killed`` is the verdict of the runtime or the kernel's log, where
    there is one; only without one (None) is an exit by SIGKILL under a
    declared memory limit taken as the limit biting. A verdict of False
    stands: a SIGKILL from anywhere else (a user's ``kill -9``, a tool's own
    watchdog) told to "declare more memory" would send the user the wrong way.
    ``signal_exit_codes`` says the engine reports a payload's death by signal N
    as exit code 128+N.
    """
    if run.cancelled or (run.returncode == 0 and not oom_killed):
        return run
    if run.returncode < 0:  # the engine's client itself died of the signal (apptainer's,
        # killed with its cgroup): recorded as docker and podman record the payload's death
        died = -run.returncode
        run = dataclasses.replace(run, returncode=128 + died, signal=run.signal or died)
    code = run.returncode
    killed = code == _KILLED or run.signal == signal.SIGKILL
    signum = run.signal
    if signum is None and signal_exit_codes and 128 < code <= 128 + _MAX_SIGNAL:
        signum = code - 128
    if oom_killed or (oom_killed is None and killed and limits.memory is not None):
        # a container whose main process outlived the kill of a worker still lost
        # part of its work: it is reported killed, with the exit it really had kept
        details = {**run.details, "exit_code": code} if code == 0 else run.details
        return dataclasses.replace(
            run,
            returncode=code or _KILLED,
            oom=True,
            signal=signal.SIGKILL if killed or code == 0 else signum,
            reason=oom_reason(engine, limits.memory),
            details=details,
        )
    missing = _missing_program(run.stderr, program)
    if missing is not None:  # the engine's init said it: not the tool's own failure
        code = 126 if missing.startswith(_DENIED) else 127  # as a shell says the two
        return dataclasses.replace(
            run, returncode=code, reason=f"{engine} could not start the step's command: {missing}"
        )
    if _TOO_BIG in run.stderr:  # apptainer's own limit, about 1 MiB, long before E2BIG
        return dataclasses.replace(
            run,
            reason=f"{engine} could not run the step: its command line and mounts are more than"
            f" {engine} takes (its configuration is limited to about 1 MiB); give the tool its"
            " many values in a file it reads, or group such inputs under one Directory input",
        )
    if code in engine_error_codes and limits.emitted and _value_refused(run.stderr):
        return dataclasses.replace(run, reason=value_reason(engine, limits, run.stderr))
    if code in engine_error_codes and limits.emitted and "cgroup" in run.stderr.lower():
        return dataclasses.replace(run, reason=enforcement_reason(engine, limits, run.stderr))
    if code in engine_error_codes:
        said = engine_message(run.stderr)
        if said:
            if "Cannot connect to the Docker daemon" in said:  # a backend chosen in a step
                said = f"{said}; {DOCKER_DAEMON_FIX}"  # function: no check before the run
            return dataclasses.replace(run, reason=f"{engine} could not run the step: {said}")
    usage = _APPTAINER_USAGE.search(run.stderr)
    if usage is not None:  # said before the container started: not the tool's exit 1
        return dataclasses.replace(
            run,
            reason=f"{engine} could not run the step: {usage.group(0).strip()}"
            f" (check backend.{engine}.run_flags)",
        )
    if oom_killed is False and killed and limits.memory is not None:
        # not "usually the out-of-memory killer": the one witness there is says otherwise
        return dataclasses.replace(
            run,
            signal=signal.SIGKILL,
            reason=f"killed by SIGKILL (signal 9), not by its {engine} --memory limit:"
            " no out-of-memory kill was recorded for it, so something else killed it",
        )
    # the engine's own warnings were taken out of run.stderr before (see
    # shinobi_containers.engine_lines): its last line is the tool's word
    return dataclasses.replace(run, signal=signum)


#: Lines an engine prints around its real complaint, which say nothing about it.
_NOISE = re.compile(r"^(?:(?:Run|See) '\S+ [\w-]+ --help'|WARNING:|Usage:)")
#: How docker and podman say an image was not here, before trying a registry.
_NOT_HERE = re.compile(
    # podman's name runs to the first colon a space follows: a registry's port
    # (localhost:5999/x:1) has colons of its own
    r"Unable to find image '([^']+)' locally|initializing source docker://(\S+?):\s"
    r'|short-name "([^"]+)" did not resolve'
    r"|Unable to handle (\S+) uri"  # apptainer, of an image it could not fetch
)
#: How apptainer refuses its own command line (a bad run_flags word), exit 1.
_APPTAINER_USAGE = re.compile(r'^Error for command "(?:exec|run)": .*$', re.MULTILINE)


def engine_message(stderr: str) -> str:
    """The engine's own complaint: its last line that is not a pointer to --help,
    a usage synopsis or a warning.

    docker ends "Unable to find image" or a socket's "permission denied" with
    "Run 'docker run --help' for more information", and an unknown flag with
    its usage line, which as the last line would be all the user was told. An
    image that is not here is said first: the registry error that follows
    (no network, no such repository) is only why it could not be fetched.
    Podman says it of a name with no registry by failing to resolve the
    "short name", which reads like a configuration problem and is a typo.
    """
    last = ""
    for line in reversed(stderr.splitlines()):
        text = line.strip()
        if text and not _NOISE.match(text):
            last = _shortened(text)
            break
    missing = _NOT_HERE.search(stderr)
    if missing:
        image = next(found for found in missing.groups() if found)
        fix = "check its name"
        if _OFFLINE.search(last):  # the name may be right: the registry was not reached
            fix = (
                "the registry could not be reached: check the network and the image's name,"
                " or bring the image here another way (`docker load` / `podman load` of a"
                " saved one, or a SIF file for apptainer)"
            )
        return f"image {image!r} is not here, and fetching it failed ({last}); {fix}"
    return last


#: The longest engine line said as it is, and how much of its start a longer one keeps.
_LONGEST = 300
_KEPT_START = 100


def _shortened(line: str) -> str:
    """``line`` cut to :data:`_LONGEST` characters in the middle, not at the end.

    An engine's last clause is its reason (runc's ``...: invalid argument``),
    and comes after a path holding a 64-digit container id: a line cut at its
    end lost the reason and kept the id.
    """
    if len(line) <= _LONGEST:
        return line
    gap = " ... "
    return line[:_KEPT_START] + gap + line[-(_LONGEST - _KEPT_START - len(gap)) :]


#: How a pull that never reached its registry ends (no DNS, no route, a proxy).
_OFFLINE = re.compile(
    r"no such host|dial tcp|connection refused|network is unreachable|i/o timeout"
    r"|TLS handshake timeout|temporary failure in name resolution|no route to host",
    re.IGNORECASE,
)
