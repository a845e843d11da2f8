"""One sacct call per round for every job this process waits on.

A recipe running forty steps on Slurm at once must not run forty sacct
loops: every step backend of a process shares one :class:`SacctPoller`
(per way of reaching Slurm), whose thread asks about all watched jobs in a
single call, then waits longer each round nothing changes (from
``poll_min`` up to ``poll_max`` seconds) and starts quick again when a job
is added, changes state or is cancelled.

An outage of slurmctld or slurmdbd is waited out, with one warning when it
starts and one when it ends: the jobs keep running on the cluster whether
or not we can ask about them, so failing the run would be wrong. Only an
outage longer than ``outage_limit`` seconds ends the wait with an error.
Throughout, a job accounting does not list (it lags, or is away) is asked of
the controller's queue, which keeps an ended job's final state for
``MinJobAge``: a job that ended is reported as it ended, with the
controller's record, however long accounting takes to hear of it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.queue import query_queue, waits, with_queue_reasons
from shinobi_slurm.sacct import FINAL_STATES, JobRecord, controller_record, query_jobs

__all__ = ["JobWatch", "PollTuning", "SacctPoller", "shared_poller"]

log = logging.getLogger("shinobi_slurm")


@dataclass(frozen=True, slots=True)
class PollTuning:
    """How eagerly to ask: seconds between rounds, and how long to put up with silence."""

    first: float = 0.5
    ceiling: float = 10.0
    growth: float = 1.5
    outage_limit: float = 3600.0
    missing_limit: float = 120.0


@dataclass(slots=True, eq=False)
class JobWatch:
    """A job someone waits for: ``done`` is set once ``record`` is final (or ``error``)."""

    job_id: str
    since: float
    #: The job's name (``--job-name``): a record of another name under the same id
    #: is another job (Slurm reused the id after a controller reset or an id
    #: wrap; sacct lists every job ever given it). None: any record is the job's.
    name: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    record: JobRecord | None = None
    latest: JobRecord | None = None
    error: str | None = None


class SacctPoller:
    """Watches jobs for every caller in this process with one sacct call per round."""

    def __init__(
        self,
        commands: SlurmCommands,
        tuning: PollTuning | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.commands = commands
        self.tuning = tuning or PollTuning()
        self.clock = clock
        self.rounds = 0
        self._lock = threading.Lock()
        self._watches: dict[str, list[JobWatch]] = {}
        self._wake = threading.Event()
        self._hurry = False
        self._thread: threading.Thread | None = None
        #: When accounting stopped answering, while it does not (None when it does).
        self.outage_since: float | None = None

    def watch(self, job_id: str, name: str | None = None) -> JobWatch:
        """Start watching ``job_id`` (submitted as ``name``); wait on the returned
        ``done`` event."""
        watch = JobWatch(job_id, self.clock(), name)
        with self._lock:
            self._watches.setdefault(job_id, []).append(watch)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="shinobi-slurm-sacct", daemon=True
                )
                self._thread.start()
        self.kick()
        return watch

    def forget(self, watch: JobWatch) -> None:
        with self._lock:
            watches = self._watches.get(watch.job_id, [])
            if watch in watches:
                watches.remove(watch)
            if not watches:
                self._watches.pop(watch.job_id, None)

    def kick(self) -> None:
        """Ask again soon (a job was added or cancelled)."""
        self._hurry = True
        self._wake.set()

    # -- the polling thread ----------------------------------------------------
    def _loop(self) -> None:
        """Poll until no one watches; an error of its own ends every wait with it,
        rather than leave each step waiting for ever on a thread that died."""
        try:
            self._poll()
        except Exception as exc:  # said to every waiting step, not lost with the thread
            with self._lock:
                self._thread = None
            self._fail_all(
                f"shinobi could not go on asking Slurm about its jobs ({type(exc).__name__}:"
                f" {exc}); the jobs may still run: see `squeue --me`"
            )

    def _poll(self) -> None:
        interval = self.tuning.first
        outage: float | None = None
        while True:
            with self._lock:
                ids = list(self._watches)
                if not ids:
                    self._thread = None
                    # an outage this thread saw is no one's to end now: a later
                    # thread would never say "answers again", and accounting_down()
                    # would stay true for good
                    self.outage_since = None
                    return
            self._hurry = False
            try:
                found = query_jobs(self.commands, ids)
            except SlurmError as exc:
                self._settle_ended(ids)  # the controller may still answer for them
                outage = self.outage_since = self._outage(exc, outage)
                interval = min(self.tuning.ceiling, max(interval, 1.0) * self.tuning.growth)
                self._sleep(interval)
                continue
            finally:
                self.rounds += 1
            if outage is not None:
                log.warning(
                    "shinobi: Slurm accounting answers again after %.0f s", self.clock() - outage
                )
                outage = self.outage_since = None
            changed = self._update(ids, found)
            if changed or self._hurry:
                interval = self.tuning.first
            else:
                interval = min(self.tuning.ceiling, interval * self.tuning.growth)
            self._sleep(interval)

    def _sleep(self, seconds: float) -> None:
        if not self._hurry:
            self._wake.wait(seconds)
        self._wake.clear()

    def _outage(self, exc: SlurmError, started: float | None) -> float:
        now = self.clock()
        if started is None:
            log.warning(
                "shinobi: cannot ask Slurm about its jobs (%s); they keep running, asking"
                " again (for up to %.0f s); %s",
                exc,
                self.tuning.outage_limit,
                exc.check,
            )
            started = now
        limit = self.tuning.outage_limit if exc.transient else min(self.tuning.outage_limit, 30.0)
        if now - started > limit:
            # the jobs the controller said had ended were settled this round (see
            # _loop); what became of the others is the waiting step's to say
            self._fail_all(
                f"lost contact with Slurm for {now - started:.0f} s ({exc}; {exc.check})"
            )
        return started

    def _fail_all(self, message: str) -> None:
        with self._lock:
            watches = [w for group in self._watches.values() for w in group]
            self._watches.clear()
        for watch in watches:
            watch.error = message
            watch.done.set()

    def _update(self, asked: list[str], found: dict[str, list[JobRecord]]) -> bool:
        """Take in sacct's answer ``found`` about the jobs ``asked``.

        A job first watched while that call was under way was not asked about,
        and sacct's silence on it says nothing: it waits for the next round
        (which its :meth:`watch` hurried) rather than cost a queue call now.
        """
        changed = False
        now = self.clock()
        with self._lock:  # the jobs asked about that someone still watches
            groups = [
                (job_id, list(watches))
                for job_id in asked
                if (watches := self._watches.get(job_id))
            ]
        found = {j: mine for j, watches in groups if (mine := _named(found.get(j, []), watches))}
        queued = self._queued([job_id for job_id, _ in groups], found)
        for job_id, watches in groups:
            records = found.get(job_id, [])
            record = records[-1] if records else None
            if record is None:
                listed = _named(queued.get(job_id, []), watches)
                said = listed[-1] if listed else None
                if said is not None and said.state in FINAL_STATES:
                    self._finish(job_id, watches, self._ended(job_id, said))
                    changed = True
                    continue
                for watch in watches:  # what the queue says, until accounting lists the job
                    watch.latest = said or watch.latest
                if now - watches[0].since > self.tuning.missing_limit:
                    self._missing(job_id, watches)
                continue
            if waits(record):
                record = with_queue_reasons([record], _named(queued.get(job_id, []), watches))[0]
            if watches[0].latest is None or watches[0].latest.state != record.state:
                changed = True
            for watch in watches:
                watch.latest = record
            if record.final:
                with self._lock:
                    self._watches.pop(job_id, None)
                for watch in watches:
                    watch.record = record
                    watch.done.set()
        return changed

    def _queued(
        self, job_ids: list[str], found: dict[str, list[JobRecord]]
    ) -> dict[str, list[JobRecord]]:
        """squeue's records of the jobs sacct does not list yet or lists as waiting, in
        one call (none if there are none).

        Accounting lags submission (by a second, or minutes when slurmdbd is
        busy or was away); until it lists a job, the queue is the only
        place that says it waits. Once it does, its reason for a waiting job
        is the one the job had when slurmdbd last heard of it: a hold or a
        drained node that came later shows only in the queue.
        """
        asked = [
            job_id
            for job_id in job_ids
            if job_id not in found or any(waits(r) for r in found[job_id])
        ]
        if not asked:
            return {}
        records, _ = query_queue(self.commands, asked)
        return records

    def _ended(self, job_id: str, queued: JobRecord) -> JobRecord:
        """The record of a job the queue says has ended: the controller's (``scontrol``:
        one call, once per job, for its exit code), else the queue's own, which does
        not say how a job that did not complete exited."""
        said = controller_record(self.commands, job_id)
        return said if said is not None and said.final else queued

    def _finish(self, job_id: str, watches: list[JobWatch], record: JobRecord) -> None:
        with self._lock:
            self._watches.pop(job_id, None)
        for watch in watches:
            watch.latest = watch.record = record
            watch.done.set()

    def _settle_ended(self, job_ids: list[str]) -> None:
        """While accounting does not answer: finish the watches of the jobs the
        controller's queue says have ended (one squeue call for all of them).

        A job that ended while slurmdbd was away was reported cancelled when the
        outage reached ``outage_limit``, and its completed work failed, though
        slurmctld knew all along that it had ended. A controller that does not
        answer either says nothing: the outage is waited out as before.
        """
        with self._lock:
            groups = {j: list(self._watches.get(j, [])) for j in job_ids}
        queued, _ = query_queue(self.commands, [j for j, w in groups.items() if w])
        for job_id, watches in groups.items():
            said = _named(queued.get(job_id, []), watches)
            if watches and said and said[-1].state in FINAL_STATES:
                self._finish(job_id, watches, self._ended(job_id, said[-1]))

    def _missing(self, job_id: str, watches: list[JobWatch]) -> None:
        """sacct has never listed the job: ask squeue, then slurmctld, before giving up."""
        try:
            queued = self.commands.run("squeue", ["-h", "-j", job_id, "-o", "%T"]).strip()
        except SlurmError:
            queued = ""
        ended = None if queued else controller_record(self.commands, job_id)
        if queued or (ended is not None and not ended.final):
            for watch in watches:
                watch.since = self.clock()
            return
        if ended is not None:  # ended, and accounting has not heard yet: the controller knows
            self._finish(job_id, watches, ended)
            return
        with self._lock:
            self._watches.pop(job_id, None)
        for watch in watches:
            watch.error = (
                f"Slurm has no record of job {job_id} (neither sacct, squeue nor scontrol"
                " knows it); is accounting (slurmdbd) configured?"
            )
            watch.done.set()


def _named(records: list[JobRecord], watches: list[JobWatch]) -> list[JobRecord]:
    """The ``records`` of the watched job: not those of another job Slurm gave the
    same id before (read as this one, a job still running read completed, and
    its step's result was cached). A record that names no job is kept."""
    name = watches[0].name if watches else None
    return [r for r in records if r.bears(name)]


_shared: dict[tuple[SlurmCommands, PollTuning], SacctPoller] = {}
_shared_lock = threading.Lock()


def shared_poller(commands: SlurmCommands, tuning: PollTuning | None = None) -> SacctPoller:
    """The process-wide poller for this way of reaching Slurm."""
    key = (commands, tuning or PollTuning())
    with _shared_lock:
        poller = _shared.get(key)
        if poller is None:
            poller = SacctPoller(commands, key[1])
            _shared[key] = poller
        return poller
