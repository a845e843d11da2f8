"""The shared poller against a scripted sacct: one call per round, back-off, outages.

These drive the poller with a stand-in for Slurm's tools (a unit test); the
live tests run the same poller against the real cluster.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

import pytest

from shinobi_slurm.commands import SlurmError
from shinobi_slurm.poller import PollTuning, SacctPoller

FAST = PollTuning(first=0.01, ceiling=0.05, growth=2.0, outage_limit=30.0, missing_limit=30.0)


class ScriptedSlurm:
    """Answers sacct with ``answer(call_number, job_ids)``; records every call."""

    def __init__(self, answer: Callable[[int, list[str]], str]) -> None:
        self.answer = answer
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
        if tool != "sacct":
            return ""
        ids = args[args.index("-j") + 1].split(",")
        with self.lock:
            self.calls.append(ids)
            number = len(self.calls)
        return self.answer(number, ids)


def lines(ids: list[str], state: str, end: str = "2026-11-30T04:00:01") -> str:
    return "".join(f"{i}|{i}|{state}|0:0|2026-11-30T04:00:00|{end}|None\n" for i in ids)


def wait_all(watches: list, timeout: float = 10.0) -> None:  # type: ignore[type-arg]
    for watch in watches:
        assert watch.done.wait(timeout), f"job {watch.job_id} never finished"


def test_one_sacct_call_per_round_covers_every_job() -> None:
    ids = [str(100 + i) for i in range(50)]

    def answer(call: int, asked: list[str]) -> str:
        # Rounds may run while the watches are still being added (a busy
        # machine): the jobs end only once a round has asked about all of them.
        if call < 4 or len(asked) < len(ids):
            return lines(asked, "RUNNING", "Unknown")
        return lines(asked, "COMPLETED")

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    watches = [poller.watch(i) for i in ids]
    wait_all(watches)
    assert all(w.record is not None and w.record.state == "COMPLETED" for w in watches)
    full = [n for n, call in enumerate(slurm.calls) if sorted(call) == sorted(ids)]
    assert full, "no round asked about every job at once"
    # Once every watch is in, each round is one call for all of them, not one
    # per job (how many partial rounds ran while the watches were being added
    # depends on the machine's load, so they are not counted).
    assert all(sorted(call) == sorted(ids) for call in slurm.calls[full[0] :]), slurm.calls


def test_intervals_grow_while_nothing_changes_and_reset_on_change() -> None:
    states = ["PENDING"] * 6 + ["RUNNING"] * 3 + ["COMPLETED"]

    def answer(call: int, ids: list[str]) -> str:
        state = states[min(call, len(states)) - 1]
        return lines(ids, state, "Unknown" if state != "COMPLETED" else "2026-11-30T04:00:01")

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, PollTuning(first=0.001, ceiling=0.008, growth=2.0))  # type: ignore[arg-type]
    asked: list[float] = []
    original = poller._sleep

    def spy(seconds: float) -> None:
        asked.append(seconds)
        original(0.0)

    poller._sleep = spy  # type: ignore[method-assign]
    wait_all([poller.watch("7")])
    rounded = [round(s, 4) for s in asked]
    # first answer is a change (nothing seen before): quick, then 2x per quiet round up to
    # the ceiling; the switch to RUNNING makes it quick again.
    assert rounded[:6] == [0.001, 0.002, 0.004, 0.008, 0.008, 0.008]
    assert rounded[6] == 0.001


def test_a_brief_outage_is_waited_out(caplog: pytest.LogCaptureFixture) -> None:
    during: list[float | None] = []

    def answer(call: int, ids: list[str]) -> str:
        during.append(poller.outage_since)  # what a cancelled step sees as it is asked
        if call <= 3:
            raise SlurmError("sacct failed: Problem talking to the database", transient=True)
        return lines(ids, "COMPLETED")

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    poller._sleep = lambda seconds: None  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="shinobi_slurm"):
        watch = poller.watch("5")
        wait_all([watch])
    assert watch.error is None and watch.record is not None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said
    assert "keep running" in said[0] and "answers again" in said[1]
    # accounting is known to be down from the first failure until it answers again
    assert during[0] is None and all(since is not None for since in during[1:4]), during
    assert poller.outage_since is None


def test_an_outage_outlived_by_no_watch_is_not_kept_for_ever() -> None:
    """The thread ended with its last watch during an outage and left ``outage_since``
    set: accounting read as down for good, and no later thread said it answered."""
    failed = threading.Event()

    def answer(call: int, ids: list[str]) -> str:
        failed.set()
        raise SlurmError("sacct failed: Connection refused", transient=True)

    poller = SacctPoller(ScriptedSlurm(answer), FAST)  # type: ignore[arg-type]
    watch = poller.watch("5")
    assert failed.wait(10)
    thread = poller._thread
    assert thread is not None
    poller.forget(watch)
    poller.kick()
    thread.join(10)
    assert not thread.is_alive()
    assert poller.outage_since is None


def test_an_outage_longer_than_the_limit_ends_the_wait() -> None:
    def answer(call: int, ids: list[str]) -> str:
        raise SlurmError("sacct failed: Connection refused", transient=True)

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, PollTuning(first=0.01, ceiling=0.02, outage_limit=0.1))  # type: ignore[arg-type]
    watch = poller.watch("5")
    wait_all([watch])
    assert watch.record is None
    assert watch.error is not None and "lost contact with Slurm" in watch.error


def test_a_final_state_without_its_end_time_is_asked_again() -> None:
    def answer(call: int, ids: list[str]) -> str:
        return lines(ids, "COMPLETED", "Unknown" if call < 3 else "2026-11-30T04:00:09")

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    watch = poller.watch("5")
    wait_all([watch])
    assert watch.record is not None and watch.record.end == "2026-11-30T04:00:09"
    assert len(slurm.calls) >= 3


def test_a_job_nobody_knows_is_reported_not_waited_for_ever() -> None:
    slurm = ScriptedSlurm(lambda call, ids: "")
    poller = SacctPoller(slurm, PollTuning(first=0.01, ceiling=0.02, missing_limit=0.05))  # type: ignore[arg-type]
    watch = poller.watch("5")
    wait_all([watch])
    assert watch.error is not None and "no record of job 5" in watch.error


def test_a_launch_too_big_for_one_argument_is_asked_about_in_a_few_calls() -> None:
    """A single ``-j`` list of 20,000 eight-digit ids is over the kernel's 128 KiB per
    argument: ``ninja status`` failed with "Argument list too long" (exit 70)."""
    from shinobi_slurm.queue import query_queue
    from shinobi_slurm.sacct import ID_LIST_LIMIT, query_jobs

    ids = [str(10_000_000 + k) for k in range(20_000)]
    slurm = ScriptedSlurm(lambda call, asked: lines(asked, "COMPLETED"))
    found = query_jobs(slurm, ids)  # type: ignore[arg-type]
    assert sorted(found) == sorted(ids)
    assert len(slurm.calls) == 2, [len(c) for c in slurm.calls]
    assert all(len(",".join(call)) <= ID_LIST_LIMIT for call in slurm.calls)
    assert len(query_jobs(slurm, ids[:1000])) == 1000 and len(slurm.calls) == 3  # one call

    class Queue:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def run(self, tool: str, args: list[str], *, stdin: str | None = None) -> str:
            listed = args[args.index("-j") + 1]
            self.calls.append(listed)
            return "".join(f"{i}|PENDING|Priority\n" for i in listed.split(","))

    queue = Queue()
    queued, error = query_queue(queue, ids)  # type: ignore[arg-type]
    assert error is None and len(queued) == 20_000 and len(queue.calls) == 2


def test_scancel_is_given_its_jobs_in_batches_a_command_line_holds() -> None:
    from shinobi_slurm.commands import CANCEL_BATCH, SlurmCommands

    given: list[list[str]] = []

    class Recording(SlurmCommands):
        def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
            given.append(list(args))
            return ""

    ids = [str(k) for k in range(CANCEL_BATCH + 5)]
    Recording().cancel(ids)
    assert [len(batch) for batch in given] == [CANCEL_BATCH, 5]
    assert [job for batch in given for job in batch] == ids


class QueueToo(ScriptedSlurm):
    """ScriptedSlurm whose squeue says every job it is asked about is held."""

    def __init__(self, answer: Callable[[int, list[str]], str]) -> None:
        super().__init__(answer)
        self.queue_calls: list[list[str]] = []

    def run(self, tool: str, args: Sequence[str], *, stdin: str | None = None) -> str:
        if tool != "squeue":
            return super().run(tool, args, stdin=stdin)
        ids = args[args.index("-j") + 1].split(",")
        with self.lock:
            self.queue_calls.append(ids)
        return "".join(f"{i}|PENDING|JobHeldUser|N/A|N/A|n\n" for i in ids)


def test_a_waiting_job_is_shown_with_the_queues_reason_not_accountings() -> None:
    """slurmdbd keeps the reason a job had when it last heard of it (BeginTime, before
    an ``scontrol hold``): the step must see the hold the queue reports."""
    rounds = threading.Event()

    def answer(call: int, ids: list[str]) -> str:
        if call > 3:
            rounds.set()
        return "".join(f"{i}|{i}|PENDING|0:0|Unknown|Unknown|BeginTime\n" for i in ids)

    slurm = QueueToo(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    watch = poller.watch("12")
    assert rounds.wait(10)
    assert watch.latest is not None and watch.latest.reason == "JobHeldUser"
    poller.forget(watch)


def test_a_job_watched_during_a_round_waits_for_the_next_one() -> None:
    """sacct was not asked about a job first watched while its call ran: its
    silence on that job is no reason to ask the queue (a flake of the test below
    under a loaded CI, where the second watch came in the middle of a round)."""
    asking, second_watched = threading.Event(), threading.Event()

    def answer(call: int, ids: list[str]) -> str:
        if call == 1:
            asking.set()
            assert second_watched.wait(10)
        return lines(ids, "RUNNING", "Unknown") if call < 4 else lines(ids, "COMPLETED")

    slurm = QueueToo(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    first = poller.watch("12")
    assert asking.wait(10)
    second = poller.watch("13")
    second_watched.set()
    wait_all([first, second])
    assert slurm.calls[0] == ["12"]
    assert slurm.queue_calls == []


def test_running_jobs_cost_no_queue_call() -> None:
    def answer(call: int, ids: list[str]) -> str:
        return lines(ids, "RUNNING", "Unknown") if call < 4 else lines(ids, "COMPLETED")

    slurm = QueueToo(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    wait_all([poller.watch(i) for i in ("12", "13")])
    assert slurm.queue_calls == []


def _named_line(job: str, state: str, end: str, name: str) -> str:
    return f"{job}|{job}|{state}|0:0|2026-11-30T04:00:00|{end}|None|1G|1:00:00|n1|cpu=1|{name}\n"


@pytest.mark.parametrize("old_first", [True, False])
def test_a_record_of_another_job_given_the_same_id_is_not_the_watched_jobs(
    old_first: bool,
) -> None:
    """After a controller reset (or an id wrap) sacct lists every job ever given
    the id: an old COMPLETED one was read as the watched job's end, a job still
    running read done, and its step's result was cached."""
    old = _named_line("7", "COMPLETED", "2026-01-01T00:00:09", "someone-elses")

    def answer(call: int, ids: list[str]) -> str:
        state, end = ("RUNNING", "Unknown") if call < 4 else ("FAILED", "2026-11-30T04:00:09")
        mine = _named_line("7", state, end, "shinobi-run1")
        return old + mine if old_first else mine + old

    slurm = ScriptedSlurm(answer)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    watch = poller.watch("7", "shinobi-run1")
    wait_all([watch])
    assert watch.record is not None and watch.record.state == "FAILED"
    assert len(slurm.calls) >= 4


def test_only_another_jobs_record_is_no_record_of_the_watched_job() -> None:
    """Accounting has not heard of the job yet, only of an old one of its id: the
    queue is asked, as for a job accounting does not list."""
    old = _named_line("8", "COMPLETED", "2026-01-01T00:00:09", "someone-elses")
    slurm = QueueToo(lambda call, ids: old)
    poller = SacctPoller(slurm, FAST)  # type: ignore[arg-type]
    watch = poller.watch("8", "n")  # the name QueueToo's queue gives every job
    deadline = threading.Event()
    deadline.wait(0.3)
    assert not watch.done.is_set()
    assert slurm.queue_calls, "the queue was never asked"
    assert watch.latest is not None and watch.latest.state == "PENDING"
    poller.forget(watch)


def test_an_error_of_the_polling_thread_ends_every_wait_with_it() -> None:
    """The thread died with a traceback on stderr (a setting past the clock's
    range, an answer it could not read), and each step waited for ever."""

    def answer(call: int, ids: list[str]) -> str:
        raise OverflowError("timestamp out of range for platform time_t")

    poller = SacctPoller(ScriptedSlurm(answer), FAST)  # type: ignore[arg-type]
    watches = [poller.watch("5"), poller.watch("6")]
    wait_all(watches)
    for watch in watches:
        assert watch.error is not None and "could not go on asking Slurm" in watch.error
        assert "OverflowError" in watch.error
    again = poller.watch("7")  # a new watch starts a new thread
    wait_all([again])
    assert again.error is not None
