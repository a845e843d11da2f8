"""Running Slurm's command-line tools, and telling a passing outage from a real refusal.

Every call goes through :class:`SlurmCommands`, so a site that is not a
submit host can set ``command_prefix = "ssh -o BatchMode=yes login01"`` in
``[backend.slurm]`` and nothing else changes. Errors become one-line
:class:`SlurmError` messages; :meth:`SlurmError.transient` says whether
waiting and asking again is the right answer (slurmctld restarting, slurmdbd
briefly away) or whether Slurm meant no.
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shinobi.errors import ENVIRONMENT_EXIT, ConfigError, ShinobiError
from shinobi_slurm.sbatch import read_by_sbatch, without_owned
from shinobi_slurm.setting_values import seconds_setting, shell_words

__all__ = ["CHECK_CONTROLLER", "SlurmCommands", "SlurmError", "SlurmUnreachable"]

#: Phrases Slurm's tools print when the controller or the database is away for a while.
_TRANSIENT = (
    "unable to contact slurm controller",
    "connection refused",
    "socket timed out",
    "slurm temporarily unable",
    "problem talking to the database",
    "slurmdbd",
    "transport endpoint",
    "resource temporarily unavailable",
    "zero bytes were transmitted",
    "did not answer within",
)

#: Of those, the ones that prove a submission never reached the controller.
_NEVER_SENT = ("unable to contact slurm controller", "connection refused")

#: What ssh says when it never reached the host, so the Slurm tool never ran; of
#: these, the first ones are the network's and may pass, the rest are settings.
_SSH_NETWORK = (
    "connection refused",
    "connection timed out",
    "no route to host",
    "network is unreachable",
    "temporary failure in name resolution",
)
_SSH_REFUSED = (
    "could not resolve hostname",
    "permission denied",
    "host key verification failed",
    "no such file or directory",
    "bad configuration option",
)

#: ssh's own exit status: its failure, not the remote command's (Slurm's tools
#: exit 1 on an error).
_SSH_FAILED = 255

#: What to look at when the controller was not reached (every such message says it).
CHECK_CONTROLLER = "check that slurmctld runs (`sinfo` answers)"
#: ... and when it was the accounting database that did not answer sacct.
CHECK_ACCOUNTING = "check that slurmdbd runs (`sacctmgr show cluster` answers)"

#: The tools that ask the accounting database (slurmdbd), not the controller.
_ASKS_ACCOUNTING = frozenset({"sacct", "sacctmgr"})

#: Phrases of the accounting database (slurmdbd) not answering.
_ACCOUNTING = ("problem talking to the database", "slurmdbd")


class SlurmError(ShinobiError):
    """A Slurm command failed; the message is one line naming it and what it said."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        never_sent: bool = False,
        check: str = CHECK_CONTROLLER,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.never_sent = never_sent
        #: What to look at when Slurm was not reached: the controller, or the ssh hop.
        self.check = check


class SlurmUnreachable(SlurmError):
    """Slurm's controller never heard of what was sent: the machine's problem, not the recipe's."""

    exit_code = ENVIRONMENT_EXIT


def _last_line(text: str) -> str:
    """The last line that says something: a closing ``Try "sbatch --help"`` does not,
    the ``unrecognized option '--partiton=debug'`` before it does."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line for line in lines if not _HELP_HINT.match(line)]
    return (said or lines or [""])[-1]


_HELP_HINT = re.compile(r'^Try "?\S+ --help"? for more information\.?$')


log = logging.getLogger("shinobi_slurm")

#: The sbatch variables already warned about in this process: said once, not per job.
_WARNED: set[str] = set()


def _environment(
    tool: str, without: Collection[str] = (), *, remote: bool = False
) -> dict[str, str] | None:
    """The environment ``tool`` runs in: for sbatch, without the ``SBATCH_*`` variables
    that would replace an option ninja sets itself (see :func:`~.sbatch.without_owned`),
    nor those named in ``without``.

    ``remote``: sbatch runs over ssh, which passes it none of them anyway
    (:meth:`SlurmCommands.sbatch_environment`); instead of a warning per
    variable, one says so (the owned ones are still left out, should ssh be
    set to send them).
    """
    if tool != "sbatch":
        return None
    kept, warnings = without_owned(os.environ)
    if remote:
        warnings = _unsent(os.environ)
    for warning in warnings:
        if warning not in _WARNED:
            _WARNED.add(warning)
            log.warning("shinobi: %s", warning)
    if without:
        return {k: v for k, v in kept.items() if k not in without}
    return kept if len(kept) != len(os.environ) else None


def _unsent(environ: Mapping[str, str]) -> list[str]:
    """The one warning for sbatch's input variables of this shell, when sbatch runs
    over ssh: they do not reach it, and the ones that do are the login host's."""
    names = sorted(read_by_sbatch(environ))
    if not names:
        return []
    return [
        f"{', '.join(names)} in this environment {'does' if len(names) == 1 else 'do'} not"
        " reach sbatch: [backend.slurm] command_prefix runs it over ssh, which passes on"
        " only what SendEnv (ssh_config) and the host's AcceptEnv allow; SBATCH_* variables"
        " of the submit host's login environment do reach it, beating the #SBATCH lines"
        " ninja writes, and ninja cannot see them: set sbatch options in [backend.slurm]"
        " sbatch_opts"
    ]


#: Job ids per ``scancel`` call.
CANCEL_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class SlurmCommands:
    """How to run sbatch, sacct, scancel and squeue here (``prefix``: e.g. an ssh hop)."""

    prefix: tuple[str, ...] = ()
    timeout: float = 60.0
    submit_retry: float = 60.0

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> SlurmCommands:
        prefix = settings.get("command_prefix") or ()
        if isinstance(prefix, str):
            prefix = tuple(shell_words("command_prefix", prefix))
        elif not isinstance(prefix, list | tuple):
            raise ConfigError(
                f"[backend.slurm] command_prefix must be a string or a list, not {prefix!r}"
            )
        timeout = seconds_setting(settings, "command_timeout", 60.0)
        if timeout == 0:  # every call would time out at once, blaming a controller that is up
            raise ConfigError(
                "[backend.slurm] command_timeout must be more than 0 s: it is how long a"
                " Slurm command may take to answer (60 when unset)"
            )
        return cls(
            prefix=tuple(str(p) for p in prefix),
            timeout=timeout,
            submit_retry=seconds_setting(settings, "submit_retry", 60.0),
        )

    @property
    def remote_shell(self) -> bool:
        """Whether the prefix is an ssh hop, which hands its command to the remote shell.

        ssh joins the words after the host with spaces and the login host's
        shell splits them again: ``-o %P|%a`` became a pipe into a command
        ``%a``, and a script path with a space two paths. Such words are quoted.
        """
        return any(os.path.basename(word) == "ssh" for word in self.prefix)

    def sbatch_environment(self, environ: Mapping[str, str] | None = None) -> Mapping[str, str]:
        """``environ`` (this process's by default) as far as the sbatch that :meth:`run`
        starts reads options from it.

        Locally, and through a prefix that passes the environment on (``env``,
        ``sudo -E``), that is ``environ`` itself. Through ssh (:attr:`remote_shell`)
        none of sbatch's input variables: ssh sends no variable unless ``SendEnv``
        in ssh_config names it and the host's ``AcceptEnv`` takes it (Debian's
        defaults: ``LANG LC_*``), so a ``SBATCH_TIMELIMIT`` of this shell neither
        beats an ``#SBATCH`` line nor is to blame for a refusal. (What the login
        host's own environment sets, ninja cannot see.)
        """
        environ = os.environ if environ is None else environ
        if not self.remote_shell:
            return environ
        sent = read_by_sbatch(environ)
        return {k: v for k, v in environ.items() if k not in sent}

    def run(
        self,
        tool: str,
        args: Sequence[str],
        *,
        stdin: str | None = None,
        without: Collection[str] = (),
    ) -> str:
        """stdout of ``tool args``; raises :class:`SlurmError` when it fails.

        ``without``: environment variables kept from sbatch (to learn whether one
        of them is what it refuses)."""
        if self.remote_shell:
            args = [shlex.quote(arg) for arg in args]
        argv = [*self.prefix, tool, *args]
        try:
            done = subprocess.run(
                argv,
                input=stdin,
                env=_environment(tool, without, remote=self.remote_shell),
                capture_output=True,
                text=True,
                timeout=self.timeout,
                check=False,
                # Not in ninja's process group: a Ctrl-C meant for ninja must not kill an
                # sbatch half-way (a job submitted whose id we never read); ninja decides.
                start_new_session=True,
            )
        except FileNotFoundError:
            # the host's problem, not a refusal of what was asked (nor one to wait out)
            raise SlurmUnreachable(
                f"{argv[0]} is not installed here; run on a Slurm submit host, or set"
                " [backend.slurm] command_prefix to reach one (e.g. 'ssh -o BatchMode=yes login01')"
            ) from None
        except subprocess.TimeoutExpired:
            # sacct asks the accounting daemon, not the controller (sinfo may answer fine)
            daemon = "slurmdbd" if tool in _ASKS_ACCOUNTING else "slurmctld"
            raise SlurmError(
                f"{tool} did not answer within {self.timeout:g} s (is {daemon} up?)",
                transient=True,
                check=CHECK_ACCOUNTING if daemon == "slurmdbd" else CHECK_CONTROLLER,
            ) from None
        if done.returncode == _SSH_FAILED and self.remote_shell:
            raise self._hop_failed(_last_line(done.stderr) or "ssh exited 255")
        if done.returncode != 0:
            said = _last_line(done.stderr) or _last_line(done.stdout) or f"exit {done.returncode}"
            # "sbatch failed: sbatch: error: ..." said the tool twice
            said = re.sub(rf"^{re.escape(tool)}: (?:error: )?", "", said)
            lowered = said.lower()
            accounting = any(p in lowered for p in _ACCOUNTING)  # sinfo may answer fine
            raise SlurmError(
                f"{tool} failed: {said}",
                transient=any(p in lowered for p in _TRANSIENT),
                never_sent=any(p in lowered for p in _NEVER_SENT),
                check=CHECK_ACCOUNTING if accounting else CHECK_CONTROLLER,
            )
        return done.stdout

    def _hop_failed(self, said: str) -> SlurmUnreachable:
        """The ssh hop of ``command_prefix`` failed: the host was not reached, or the
        connection broke (a command it carried may then have run).

        Not a refusal of what was asked, so not the recipe's fault: exit 74,
        naming the hop to try by hand.
        """
        lowered = said.lower()
        network = any(p in lowered for p in _SSH_NETWORK)
        never_sent = network or any(p in lowered for p in _SSH_REFUSED)
        hop = shlex.join(self.prefix)
        return SlurmUnreachable(
            f"ssh to the Slurm host failed: {said}",
            transient=network or not never_sent,
            never_sent=never_sent,
            check=f"check that `{hop} sinfo` answers, or fix [backend.slurm] command_prefix",
        )

    def submit(self, args: Sequence[str], *, stdin: str | None = None) -> str:
        """``sbatch --parsable args``: the new job's id.

        Retried for up to ``submit_retry`` seconds only while the controller
        cannot be reached at all, which proves the job was never created; a
        timeout after sending might have created it, so it is not retried.
        """
        deadline = time.monotonic() + self.submit_retry
        delay = 1.0
        while True:
            try:
                out = self.run("sbatch", ["--parsable", *args], stdin=stdin)
            except SlurmError as exc:
                waits = exc.never_sent and exc.transient  # a wrong setting will not pass
                if not waits or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
                continue
            job_id = out.strip().splitlines()[-1].split(";")[0].strip() if out.strip() else ""
            if not job_id.isdigit():
                raise SlurmError(f"sbatch answered {out.strip()!r}, not a job id")
            return job_id

    def cancel(self, job_ids: Sequence[str], name: str | None = None) -> None:
        """``scancel`` the given jobs: one call, one more per :data:`CANCEL_BATCH` jobs
        (a command line holds at most 2 MiB, some 100,000 job ids).

        With ``name``, only those of the jobs named so are cancelled (scancel
        silently leaves a listed job of another name alone): a launch's handle
        names its jobs by id, and after a controller reset or a MaxJobId wrap
        an id may be another user's job.
        """
        named = [f"--name={name}"] if name else []
        for start in range(0, len(job_ids), CANCEL_BATCH):
            try:
                self.run("scancel", [*named, *job_ids[start : start + CANCEL_BATCH]])
            except SlurmError as exc:
                # With a filter, scancel fails on an id the controller no longer
                # knows (without one it is silent): that job has ended, and the
                # others listed were still cancelled.
                if not (named and "invalid job id specified" in str(exc).lower()):
                    raise

    def cancel_named(self, name: str) -> None:
        """``scancel --name``: every job of a launch, including any its handle lacks."""
        self.run("scancel", [f"--name={name}"])
