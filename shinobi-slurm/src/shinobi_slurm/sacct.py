"""Asking sacct about many jobs in one call, and reading its answer.

``sacct -X -P -n -j ID,ID,... -o FIELDS`` gives one line per job allocation
(``-X`` leaves out the ``.batch``/``.extern`` steps), ``|``-separated. A job
array appears as one line per task that has started (``16_0``) plus, while
some wait, one line for the pending rest (``16_[2-5]``). Right after a job
is submitted sacct may not list it yet, and right after it ends the line can
still say it is running or lack its end time: a record is only final when
its state is final *and* its end time is known.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shinobi.errors import UsageError
from shinobi_slurm.commands import SlurmCommands, SlurmError

__all__ = [
    "FIELDS",
    "FINAL_STATES",
    "LIMITED_STATES",
    "JobRecord",
    "controller_exit",
    "controller_record",
    "cut_exit",
    "id_lists",
    "job_limits",
    "parse_sacct",
    "query_jobs",
    "query_named",
    "with_exit",
    "with_true_exit",
    "without_stale_ranges",
]

FIELDS = (
    "JobID",
    "JobIDRaw",
    "State",
    "ExitCode",
    "Start",
    "End",
    "Reason",
    "ReqMem",
    "Timelimit",
    "NodeList",
    "AllocTRES",
    "JobName",
)
#: The fields a line must have; the limits and nodes after them are read where present.
_NEEDED = FIELDS.index("ReqMem")
#: Where the job's name starts: last, so a ``|`` in another user's job name
#: cannot shift the fields before it.
_NAME_AT = FIELDS.index("JobName")

#: States after which a job never changes again.
FINAL_STATES = frozenset(
    {
        "COMPLETED",
        "FAILED",
        "OUT_OF_MEMORY",
        "TIMEOUT",
        "NODE_FAIL",
        "CANCELLED",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
    }
)

_JOB_ID = re.compile(r"^(?P<base>\d+)(?:_(?P<task>\d+|\[(?P<ranges>[^\]]*)\]))?(?:\+\d+)?$")
_EXIT = re.compile(r"^(\d+):(\d+)$")
_UNSET = ("", "Unknown", "None", "N/A")


def _ids(ranges: str) -> frozenset[int]:
    """The tasks in ``0-3,7`` (a ``%N`` throttle suffix is ignored)."""
    found: set[int] = set()
    for part in ranges.split("%")[0].split(","):
        low, _, high = part.strip().partition("-")
        try:
            found.update(range(int(low), int(high) + 1) if high else (int(low),))
        except ValueError:
            continue
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One line of sacct: a job, one array task, or an array's pending tasks."""

    job_id: str
    base: str
    task: int | None
    state: str
    by: str | None
    exit_code: int | None
    exit_signal: int | None
    start: str | None
    end: str | None
    reason: str | None
    #: the tasks a pending (or cancelled-while-pending) array line stands for
    pending_ids: frozenset[int] = frozenset()
    #: what the job was allowed, as words (``AllocTRES``'s memory, else ``ReqMem``;
    #: ``Timelimit``), if sacct said
    memory_limit: str | None = None
    time_limit: str | None = None
    #: whether Slurm gave the job a node (False: "None assigned"); None: not said
    had_node: bool | None = None
    #: the nodes it ran on, as Slurm writes them (``node[01-04]``); None: none, or not said
    nodes: str | None = None
    #: the job's name (``--job-name``); None: not said. A launch's handle names its
    #: jobs by id, and a reused id (controller reset, MaxJobId wrap) is told by it.
    name: str | None = None
    #: said by the controller's queue (squeue), not by accounting: an ended job's
    #: exit code (but a COMPLETED one's) and who cancelled it are not known
    from_queue: bool = False

    @property
    def pending_tasks(self) -> int:
        """How many tasks a pending array line stands for (0: a job or one task)."""
        return len(self.pending_ids)

    def bears(self, name: str | None) -> bool:
        """Whether this may be a record of the job submitted as ``name`` (None: any
        job). A job of another name holds the id (Slurm reused it after a controller
        reset or an id wrap: accounting lists every job ever given it); a record
        that names no job (accounting's, a moment after sbatch) may be any."""
        return name is None or self.name is None or self.name == name

    @property
    def final(self) -> bool:
        """Whether the job has ended and its record says all it will: accounting's
        once its end and exit code are in; the queue's once the job has ended (it
        never says the exit code)."""
        said = self.exit_code is not None or self.from_queue
        return self.state in FINAL_STATES and self.end is not None and said

    @property
    def started(self) -> bool:
        """Whether the job ever ran.

        Slurm gives a job cancelled while pending Start = End = the moment it
        was cancelled, and it keeps the reason it waited for (Dependency,
        Priority, ...). A job that ran may keep that reason too (a dependent
        job that completed still says Dependency), so only a cancelled one is
        judged by it. A pending job's Start is when Slurm expects to start it.
        A job cancelled while it waited for no reason (``None``) is told by its
        node list instead: "None assigned".
        """
        if self.start is None or self.state == "PENDING" or self.had_node is False:
            return False
        pending_then_cancelled = (
            self.state == "CANCELLED" and self.start == self.end and self.reason is not None
        )
        return not pending_then_cancelled

    @property
    def exit_text(self) -> str | None:
        if self.exit_code is None:
            return None
        return f"{self.exit_code}:{self.exit_signal or 0}"


def without_stale_ranges(records: list[JobRecord]) -> list[JobRecord]:
    """An array's lines with each task counted once.

    slurmdbd can keep a pending line (``8465_[16-299]``) after some of its
    tasks have started and got lines of their own; counted as it stands, a
    300-task array showed 463 tasks while it ran. A task with its own line is
    taken out of every range line, and a range left empty is dropped.
    """
    listed = {r.task for r in records if r.task is not None}
    if not listed or not any(r.pending_ids & listed for r in records):
        return records
    kept = []
    for record in records:
        if record.pending_ids:
            left = record.pending_ids - listed
            if not left:
                continue
            record = dataclasses.replace(record, pending_ids=left)
        kept.append(record)
    return kept


def _value(text: str) -> str | None:
    text = text.strip()
    return None if text in _UNSET else text


def _nodes(node_list: str | None) -> str | None:
    """The nodes a job ran on, as Slurm writes them; None when it had none or sacct did not say."""
    text = None if node_list is None else _value(node_list)
    return None if text == "None assigned" else text


def parse_line(line: str) -> JobRecord | None:
    parts = line.rstrip("\n").split("|")
    if len(parts) < _NEEDED:
        return None
    job_id, _raw, state_text, exit_text, start, end, reason = parts[:_NEEDED]
    req_mem, time_limit, node_list, tres = (*parts[_NEEDED : _NEEDED + 4], None, None, None, None)[
        :4
    ]
    match = _JOB_ID.match(job_id.strip())
    if match is None:
        return None
    words = state_text.split()
    state = words[0].rstrip("+").upper() if words else ""
    by = words[2] if len(words) >= 3 and words[1] == "by" else None
    exit_match = _EXIT.match(exit_text.strip())
    task_text = match.group("task")
    ranges = match.group("ranges")
    return JobRecord(
        job_id=job_id.strip(),
        base=match.group("base"),
        task=int(task_text) if task_text and ranges is None else None,
        state=state,
        by=by,
        exit_code=int(exit_match.group(1)) if exit_match else None,
        exit_signal=int(exit_match.group(2)) if exit_match else None,
        start=_value(start),
        end=_value(end),
        reason=_value(reason),
        pending_ids=_ids(ranges) if ranges is not None else frozenset(),
        memory_limit=_allocated_memory(tres) or _memory(req_mem),
        time_limit=_time(time_limit),
        had_node=None if node_list is None else node_list.strip() not in ("", "None assigned"),
        nodes=_nodes(node_list),
        name=_name(parts[_NAME_AT:]),
    )


#: The name accounting gives a job whose record was written before its name was:
#: for a moment after submission, sacct reads "allocation" for every job.
_NAMELESS = "allocation"


def _name(parts: list[str]) -> str | None:
    """The ``JobName`` field (the last: rejoined, should the name hold a ``|``);
    None when the line has none, or accounting does not know it yet."""
    name = "|".join(parts) if parts else None
    return None if name == _NAMELESS else name


def parse_sacct(text: str) -> list[JobRecord]:
    """Every well-formed line of ``sacct -P -n -o FIELDS`` output; others are skipped."""
    records = []
    for line in text.splitlines():
        if line.strip():
            record = parse_line(line)
            if record is not None:
                records.append(record)
    return records


#: The longest ``-j`` list one call is given. The kernel refuses a single
#: argument over 128 KiB (MAX_ARG_STRLEN): a launch of some 18,000 jobs or more.
ID_LIST_LIMIT = 100_000


def id_lists(ids: Sequence[str], limit: int = ID_LIST_LIMIT) -> list[str]:
    """``ids`` as comma-separated lists, each at most ``limit`` characters: one for
    any launch of up to about ten thousand jobs, one more for each as many again."""
    lists: list[str] = []
    start, size = 0, 0
    for end, job in enumerate(ids):
        if size and size + 1 + len(job) > limit:
            lists.append(",".join(ids[start:end]))
            start, size = end, 0
        size += len(job) + (1 if size else 0)
    if start < len(ids):
        lists.append(",".join(ids[start:]))
    return lists


def query_jobs(commands: SlurmCommands, job_ids: Iterable[str]) -> dict[str, list[JobRecord]]:
    """Records of every job in ``job_ids`` (array tasks included), by job id: one sacct
    call (one more per :data:`ID_LIST_LIMIT` characters of ids)."""
    ids = sorted({str(j) for j in job_ids})
    if not ids:
        return {}
    damaged = [j for j in ids if not j.isdigit()]  # sbatch --parsable gave digits
    if damaged:
        raise UsageError(
            f"a launch handle names {damaged[0]!r} as a Slurm job id, which it is not: the"
            " handle is damaged (`ninja clean --launches --force` removes damaged launches)"
        )
    ids.sort(key=int)
    found: dict[str, list[JobRecord]] = {}
    for listed in id_lists(ids):
        out = commands.run("sacct", ["-X", "-P", "-n", "-j", listed, "-o", ",".join(FIELDS)])
        for record in parse_sacct(out):
            found.setdefault(record.base, []).append(record)
    return found


#: Every state ``sacct -s`` takes. Without a state, sacct lists only the jobs that
#: became eligible in the window, and a job cancelled while it waited on a
#: dependency (never eligible) was not listed: a stopped submitter's unrecorded
#: job read "running" until the controller forgot it, then "never submitted".
_EVERY_STATE = "BF,CA,CD,DL,F,NF,OOM,PD,PR,R,RQ,RS,RV,S,TO"

#: What ``query_named`` asks: the fields before the name, then how the job was submitted.
_NAMED_FIELDS = (*FIELDS[:_NAME_AT], "SubmitLine")


def query_named(
    commands: SlurmCommands, names: Sequence[str], since: float
) -> list[tuple[JobRecord, str]]:
    """Every job named one of ``names`` submitted after ``since`` (epoch seconds),
    each with its ``SubmitLine`` (``sbatch --parsable SCRIPT``): one sacct call.

    For a launch whose submitter stopped between sbatch's answer and its
    record of the job: the job's name is the launch's, and its submit line
    names its script, which names its step (accounting does not keep a job's
    ``--comment`` unless the site asks it to). Without ``-j``, sacct lists
    only jobs since midnight unless told a start.
    """
    if not names:
        return []
    start = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(since))
    window = ["-S", start, "-E", "now", "-s", _EVERY_STATE]
    out = commands.run(
        "sacct",
        ["-X", "-P", "-n", *window, f"--name={','.join(names)}", "-o", ",".join(_NAMED_FIELDS)],
    )
    found = []
    for line in out.splitlines():
        parts = line.split("|")
        record = parse_line("|".join(parts[:_NAME_AT])) if len(parts) > _NAME_AT else None
        if record is not None:  # the submit line last: rejoined, should it hold a "|"
            found.append((record, "|".join(parts[_NAME_AT:])))
    return found


def _controller(commands: SlurmCommands, job_id: str) -> str | None:
    """``scontrol -o show job``: one line of ``Key=value``; None once the job is forgotten."""
    try:
        return commands.run("scontrol", ["-o", "show", "job", job_id])
    except SlurmError:
        return None


def _field(text: str, key: str) -> str | None:
    match = re.search(rf"(?:^|\s){key}=(\S+)", text)
    return _value(match.group(1)) if match else None


def controller_record(commands: SlurmCommands, job_id: str) -> JobRecord | None:
    """What slurmctld says of ``job_id``, as a sacct record would; None if it has forgotten it.

    For an accounting gap: slurmdbd away while a job ran leaves sacct without
    the job for a while after it answers again, and squeue lists only jobs
    that have not ended. The controller keeps ended jobs for ``MinJobAge``.
    """
    said = _controller(commands, job_id)
    if said is None or _field(said, "JobId") != job_id:
        return None
    state = _field(said, "JobState") or ""
    exit_text = _field(said, "ExitCode") or ""
    start, end = _field(said, "StartTime") or "", _field(said, "EndTime") or ""
    return parse_line(
        f"{job_id}|{job_id}|{state}|{exit_text}|{start}|{end}|{_field(said, 'Reason')}"
    )


def controller_exit(commands: SlurmCommands, job_id: str) -> tuple[int, int] | None:
    """The job's exit code and signal as slurmctld has them, while it still knows the job.

    Slurm 22.05's accounting keeps an exit status of 128 or more modulo 128
    (sacct shows a tool's ``exit 137`` as ``9:0`` and ``exit 128`` as ``0:0``),
    while ``scontrol`` has the real one for ``MinJobAge`` seconds after the end.
    None when the controller has forgotten the job or cannot be asked.
    """
    found = _EXIT.match(_field(_controller(commands, job_id) or "", "ExitCode") or "")
    return (int(found.group(1)), int(found.group(2))) if found else None


def cut_exit(record: JobRecord) -> bool:
    """Whether ``record``'s exit code may be accounting's cut-down one: it failed by
    exiting (no signal), and Slurm's accounting keeps exit codes modulo 128."""
    return record.state == "FAILED" and not record.exit_signal and not record.pending_tasks


def with_exit(record: JobRecord, code: int | None) -> JobRecord:
    """``record`` with the full exit ``code`` found elsewhere, when it is the one
    accounting cut down (equal modulo 128), or when ``record`` is the queue's,
    which says no code at all (a job that just ended, before accounting has
    it); else ``record`` as it is, since the code then describes another run
    (or a signal's)."""
    if code is None:
        return record
    if record.exit_code is not None and code % 128 != record.exit_code % 128:
        return record
    return dataclasses.replace(record, exit_code=code)


def with_true_exit(commands: SlurmCommands, record: JobRecord) -> JobRecord:
    """``record`` with the controller's exit code when accounting may have cut it down.

    Only a failed job that exited (no signal) is asked about: one call per
    such job, none for the jobs that completed.
    """
    if not cut_exit(record) or record.task is not None:
        return record
    found = controller_exit(commands, record.base)
    return with_exit(record, None if found is None or found[1] else found[0])


#: Final states whose message names a limit the job had.
LIMITED_STATES = frozenset({"OUT_OF_MEMORY", "TIMEOUT"})

#: Timelimit values that name no number to raise.
_NO_TIME_LIMIT = frozenset({"UNLIMITED", "Partition_Limit"})

_MEMORY = re.compile(r"^\d+(?:\.\d+)?[KMGTPE]?[nc]?$")


def job_limits(commands: SlurmCommands, job_id: str) -> tuple[str | None, str | None]:
    """The memory and the time limit job ``job_id`` ran with, as Slurm writes them.

    Asked only after a job was stopped for exceeding one, so the message can
    say by how much to raise it: from the controller while it knows the job,
    else from accounting (whose ``ReqMem`` reads ``16?`` for a moment after
    the job ends: such a value is not shown). (None, None) when neither can say.
    """
    said = _controller(commands, job_id)
    if said is not None:
        per_node, per_cpu = _field(said, "MinMemoryNode"), _field(said, "MinMemoryCPU")
        per_cpu_words = _memory(f"{per_cpu}c" if per_cpu else None)
        allocated = _allocated_memory(_field(said, "TRES"))
        if allocated and per_cpu_words:  # 4G in all, as 512M for each of 8 CPUs
            memory: str | None = f"{allocated} ({per_cpu_words})"
        else:
            memory = allocated or _memory(per_node) or per_cpu_words
        limits = memory, _time(_field(said, "TimeLimit"))
        if limits != (None, None):
            return limits
    try:
        out = commands.run(
            "sacct", ["-X", "-P", "-n", "-j", job_id, "-o", "ReqMem,Timelimit,AllocTRES"]
        )
    except SlurmError:
        return None, None
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        return None, None
    memory, time, tres = (*lines[0].split("|"), "", "")[:3]
    return _allocated_memory(tres) or _memory(memory), _time(time)


def _time(text: str | None) -> str | None:
    value = _value(text or "")
    return None if value is None or value in _NO_TIME_LIMIT else value


def _allocated_memory(tres: str | None) -> str | None:
    """The memory Slurm gave a job, from its TRES (``cpu=8,mem=4G,node=1``).

    ``ReqMem`` is what was asked, which for a job given more CPUs than it asked
    for (``--exclusive``) is one CPU's DefMemPerCPU: a whole-node job killed at
    4G was said to have "512M of memory".
    """
    for item in (tres or "").split(","):
        key, _, value = item.partition("=")
        if key.strip() == "mem":
            return _memory(value)
    return None


def _memory(text: str | None) -> str | None:
    """``ReqMem`` as words: ``64M``; ``512Mc`` (older Slurm: per CPU) is ``512M per CPU``."""
    value = _value(text or "")
    if value is None or not _MEMORY.match(value) or value.startswith("0"):
        return None
    if value.endswith("c"):
        return f"{value[:-1]} per CPU"
    return value.removesuffix("n")
