"""The batch jobs of runs whose ninja is gone, and whether they still run.

A ``ninja run`` on a batch backend (``--backend slurm``) hands each step to
the engine as a job and lists it in the run's ledger
(:data:`shinobi.local_runs.JOBS_LEDGER`, in a folder named after the
backend). A ninja killed outright cannot cancel them: they run on, writing
their products, and the next run in the workdir would start the same steps
beside them. :func:`shinobi.live_runs.other_runs` refuses to, and ``ninja
clean --runs`` keeps such a run's folder while a job of it lives; both ask
here. The backend that wrote a ledger is asked, through the plugin registry
(core never imports a plugin), once for the jobs of every run given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.wording import listed

if TYPE_CHECKING:
    from shinobi.backends.base import Backend

__all__ = ["LeftJobs", "left_jobs"]

#: A backend's configuration table by its name (``AppConfig.backend_settings``).
Settings = Callable[[str], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class LeftJobs:
    """What one backend said of the jobs one run listed in its ledger."""

    run_dir: Path
    #: The ledger, relative to ``run_dir`` (``slurm/jobs.tsv``).
    ledger: Path
    #: The jobs still queued or running.
    alive: tuple[str, ...] = ()
    #: The command that stops them (``scancel 1 2``); None: none to name.
    stop: str | None = None
    #: Why the backend could not say (None: it did).
    unknown: str | None = None
    #: What the ledger lists, for a message (the backend's ``ledger_noun``).
    noun: str = "job"

    @property
    def engine(self) -> str:
        return self.ledger.parent.name

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    @property
    def named(self) -> str:
        """The jobs still alive, for a message: ``slurm jobs 15502, 15503``."""
        ids = self.alive
        return f"{self.engine} {self.noun}{'s' if len(ids) > 1 else ''} {listed(ids, 5)}"

    @property
    def alive_as(self) -> str:
        """How an entry still alive is, for a message: a batch job may be waiting."""
        return "queued or running" if self.noun == "job" else "running"

    @property
    def kind(self) -> str:
        """What such entries are, for a message: ``batch jobs``, ``containers``."""
        return "batch jobs" if self.noun == "job" else f"{self.noun}s"

    @property
    def how_to_stop(self) -> str:
        """How the user stops the jobs still alive, for a message."""
        return self.stop or f"with {self.engine}'s own tools"

    @property
    def ended(self) -> bool:
        """Whether every job listed is known to have ended."""
        return self.unknown is None and not self.alive


def left_jobs(run_dirs: Sequence[Path], settings: Settings | None = None) -> list[LeftJobs]:
    """What the backends say of the jobs each run folder of ``run_dirs`` lists, one
    entry per ledger (none for a run that submitted no job); each backend is asked
    once for all of them."""
    from shinobi.local_runs import ledger_job_ids, ledgers_in

    by_engine: dict[str, list[tuple[Path, Path, list[str]]]] = {}
    for run_dir in run_dirs:
        for ledger in ledgers_in(run_dir):
            entry = (run_dir, ledger, ledger_job_ids(run_dir / ledger))
            by_engine.setdefault(ledger.parent.name, []).append(entry)
    found: list[LeftJobs] = []
    for engine, ledgers in by_engine.items():
        found += _asked(engine, ledgers, settings)
    return found


def _asked(
    engine: str, ledgers: list[tuple[Path, Path, list[str]]], settings: Settings | None
) -> list[LeftJobs]:
    """One backend's answer for the ledgers it wrote (each: run folder, ledger, ids)."""
    from shinobi.errors import ShinobiError

    by_run = {run_dir.name: ids for run_dir, _, ids in ledgers}
    noun = "job"
    try:
        backend = _backend(engine, settings)
        noun = backend.ledger_noun
        alive = backend.live_jobs(by_run)
    except (ShinobiError, OSError) as exc:
        return [
            LeftJobs(run_dir, ledger, unknown=str(exc), noun=noun) for run_dir, ledger, _ in ledgers
        ]
    if alive is None:
        why = f"the {engine} backend cannot tell whether its {noun}s still run"
        return [LeftJobs(run_dir, ledger, unknown=why, noun=noun) for run_dir, ledger, _ in ledgers]
    found = []
    for run_dir, ledger, ids in ledgers:
        living = set(alive.get(run_dir.name, ()))
        left = [job for job in ids if job in living]
        stop = backend.jobs_stop_command(left) if left else None
        found.append(LeftJobs(run_dir, ledger, tuple(left), stop, noun=noun))
    return found


def _backend(engine: str, settings: Settings | None) -> Backend:
    from shinobi.backends import get_backend

    if settings is None:
        from shinobi.config import load_config

        settings = load_config().backend_settings
    return get_backend(engine, settings(engine))
