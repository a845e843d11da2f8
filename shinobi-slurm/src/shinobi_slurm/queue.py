"""squeue, for the jobs sacct does not list yet.

Accounting records reach slurmdbd a moment after submission, and minutes
later when slurmdbd is busy or was away; until then a launch's jobs would
read "unknown". One squeue call for exactly the jobs sacct did not list
fills the gap, so a status round is still a constant number of calls however
many jobs there are. It asks for every state (``-t all``): the controller
keeps an ended job, with its final state, for ``MinJobAge`` seconds, and
without ``-t all`` squeue leaves such jobs out, so a launch whose step had
failed read "running". squeue cannot say an ended job's exit code, nor who
cancelled it: such a record has ``exit_code`` None (a COMPLETED job's is 0)
and ``from_queue`` set, and is reported as far as it goes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.sacct import FINAL_STATES, JobRecord, id_lists, parse_line

__all__ = ["parse_queue_line", "query_queue", "query_queue_named", "waits", "with_queue_reasons"]


def query_queue(
    commands: SlurmCommands, job_ids: Iterable[str]
) -> tuple[dict[str, list[JobRecord]], str | None]:
    """What the controller's queue says about ``job_ids``, and why it said nothing
    when it could not be asked (None when it answered, "none of those" included)."""
    ids = sorted({str(j) for j in job_ids}, key=int)
    if not ids:
        return {}, None
    out = ""
    for listed in id_lists(ids):
        try:
            out += commands.run("squeue", [*_EVERY_STATE, "-j", listed, "-o", _FORMAT]) + "\n"
        except SlurmError as exc:
            if "invalid job id" in str(exc).lower():
                continue  # an answer: the queue holds none of them
            return {}, str(exc)  # the controller is away: nothing can be told from it
    found: dict[str, list[JobRecord]] = {}
    for line in out.splitlines():
        record = parse_queue_line(line)
        if record is not None:
            found.setdefault(record.base, []).append(record)
    return found, None


def waits(record: JobRecord) -> bool:
    """Whether ``record`` says its job waits to start: the controller says why better."""
    return record.state == "PENDING"


def with_queue_reasons(records: list[JobRecord], queued: list[JobRecord]) -> list[JobRecord]:
    """``records`` (accounting's), each waiting one with the reason the queue gives now.

    slurmdbd keeps the reason a job had when it was last sent there: a job held
    after its submission reads ``None`` or ``BeginTime`` in sacct for as long as
    it waits, while squeue says ``JobHeldUser``, the one that needs acting on.
    A job the queue no longer shows waiting keeps accounting's record.
    """
    said = {q.job_id: q.reason for q in queued if q.reason and waits(q)}
    if not said:
        return records
    only = next(iter(said.values())) if len(said) == 1 else None
    return [
        dataclasses.replace(r, reason=said.get(r.job_id, only) or r.reason) if waits(r) else r
        for r in records
    ]


#: Jobs and array tasks one a line, in every state: ended ones too, while the
#: controller keeps them (``MinJobAge``).
_EVERY_STATE = ("-h", "-r", "-t", "all")
#: Id, state, reason, start, end, and the name last (it may hold a ``|``).
_FORMAT = "%i|%T|%r|%S|%e|%j"


def parse_queue_line(line: str) -> JobRecord | None:
    """One line of ``squeue -o`` :data:`_FORMAT` as a record; a line of only the
    first three fields (``%i|%T|%r``) is read too. None for a line that is not one.

    A job in a final state that squeue lists has ended; its exit code is not
    said (a COMPLETED job's is 0:0, by what COMPLETED means), and its end time
    is kept only for a job that ended.
    """
    parts = line.strip().split("|", 5)
    if len(parts) < 3:
        return None
    job_id, state, reason = parts[:3]
    start, end = (parts[3], parts[4]) if len(parts) > 5 else ("Unknown", "Unknown")
    final = state.strip().upper() in FINAL_STATES
    exit_text = "0:0" if state.strip().upper() == "COMPLETED" else ""
    record = parse_line(
        f"{job_id}|{job_id}|{state}|{exit_text}|{start}|{end if final else 'Unknown'}|{reason}"
    )
    if record is None:
        return None
    name = parts[-1] if len(parts) in (4, 6) else None  # a reused id is told by it
    return dataclasses.replace(record, name=name, from_queue=True)


def query_queue_named(commands: SlurmCommands, names: Sequence[str]) -> list[tuple[JobRecord, str]]:
    """Every job the controller holds (queued, running, or ended within ``MinJobAge``)
    named one of ``names``, each with its script: one squeue call.

    The queue's half of :func:`~shinobi_slurm.sacct.query_named`: a job that
    waits is not in accounting yet (slurmdbd hears of it later), and a stopped
    submitter's unrecorded job most likely waits.
    """
    if not names:
        return []
    out = commands.run(
        "squeue", ["-h", "-r", "-t", "all", "-n", ",".join(names), "-o", "%i|%T|%r|%S|%e|%o"]
    )
    found = []
    for line in out.splitlines():
        parts = line.strip().split("|", 5)  # the script last: it may hold a "|"
        if len(parts) < 6:
            continue
        # read as every queue line is: a job that ended (cancelled while it waited)
        # has ended, and is no job "ending" until accounting hears of it
        record = parse_queue_line("|".join(parts[:5]) + "|")
        if record is not None:
            found.append((dataclasses.replace(record, name=None), parts[5]))
    return found
