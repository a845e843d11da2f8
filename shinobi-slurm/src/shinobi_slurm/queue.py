"""squeue, for the few seconds before sacct lists a job just submitted.

Accounting records reach slurmdbd a moment after submission; until then a
launch's newest jobs would read "unknown". One squeue call for exactly the
jobs sacct did not list fills the gap, so a status round is still a
constant number of calls however many jobs there are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from shinobi_slurm.commands import SlurmCommands, SlurmError
from shinobi_slurm.sacct import JobRecord, id_lists, parse_line

__all__ = ["query_queue", "query_queue_named"]


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
            out += commands.run("squeue", ["-h", "-r", "-j", listed, "-o", "%i|%T|%r|%j"]) + "\n"
        except SlurmError as exc:
            if "invalid job id" in str(exc).lower():
                continue  # an answer: the queue holds none of them
            return {}, str(exc)  # the controller is away: nothing can be told from it
    found: dict[str, list[JobRecord]] = {}
    for line in out.splitlines():
        parts = line.strip().split("|", 3)  # the name last: it may hold a "|"
        if len(parts) < 3:
            continue
        job_id, state, reason = parts[:3]
        record = parse_line(f"{job_id}|{job_id}|{state}||Unknown|Unknown|{reason}")
        if record is not None:
            name = parts[3] if len(parts) > 3 else None  # a reused id is told by it
            found.setdefault(record.base, []).append(dataclasses.replace(record, name=name))
    return found, None


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
        "squeue", ["-h", "-r", "-t", "all", "-n", ",".join(names), "-o", "%i|%T|%r|%o"]
    )
    found = []
    for line in out.splitlines():
        parts = line.strip().split("|", 3)  # the script last: it may hold a "|"
        if len(parts) < 4:
            continue
        job_id, state, reason, script = parts
        record = parse_line(f"{job_id}|{job_id}|{state}||Unknown|Unknown|{reason}")
        if record is not None:
            found.append((record, script))
    return found
