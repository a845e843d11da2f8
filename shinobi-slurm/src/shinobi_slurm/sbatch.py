"""Batch scripts: ``#SBATCH`` directives from a step's footprint and the site's settings.

A declared footprint becomes ``--cpus-per-task`` (CPUs rounded up to whole
ones) and ``--mem`` (rounded up to whole MiB, Slurm's ``M``);
``cpus="all"`` asks for the whole node with ``--exclusive`` (and, unless the
step declares its memory, ``--mem=0``: all of the node's) rather than
inventing a number. Options configured in ``[backend.slurm] sbatch_opts``
win over derived ones (``--mem-per-cpu`` there also replaces a derived
``--mem``, which Slurm would otherwise reject as conflicting).

Commands are written with ``shlex.join``: an argument reaches the tool
exactly as the recipe gave it, whatever quotes or ``$(...)`` it holds.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from shinobi.errors import ConfigError, UsageError
from shinobi.offload.jobs import env_command
from shinobi.resources import Resources
from shinobi_slurm.setting_values import shell_words

if TYPE_CHECKING:
    from shinobi.launch.handle import LaunchHandle

__all__ = [
    "SHELL_UNSAFE",
    "SIGNAL_RELAY",
    "Option",
    "batch_script",
    "command_line",
    "command_lines",
    "directive",
    "directive_line",
    "exec_lines",
    "input_variables",
    "job_name",
    "launch_job_name",
    "line_break_in",
    "log_path",
    "memory_mib",
    "memory_option",
    "merge_options",
    "overridden_by",
    "overriding_environment",
    "owned_environment",
    "parse_sbatch_opts",
    "payload_line",
    "read_by_sbatch",
    "refuse_line_breaks",
    "relay_lines",
    "resource_options",
    "script_text",
    "shell_line",
    "shown_value",
    "time_minutes",
    "with_environment",
    "without_owned",
]

_SHORT = {
    "-A": "account",
    "-C": "constraint",
    "-D": "chdir",
    "-G": "gpus",
    "-H": "hold",
    "-J": "job-name",
    "-L": "licenses",
    "-M": "clusters",
    "-N": "nodes",
    "-O": "overcommit",
    "-W": "wait",
    "-a": "array",
    "-b": "begin",
    "-c": "cpus-per-task",
    "-d": "dependency",
    "-e": "error",
    "-k": "no-kill",
    "-n": "ntasks",
    "-o": "output",
    "-p": "partition",
    "-q": "qos",
    "-s": "oversubscribe",
    "-t": "time",
    "-w": "nodelist",
    "-x": "exclude",
}

#: Long options that never take a separate value (``--exclusive debug`` is two words).
_FLAGS = frozenset(
    {
        "contiguous",
        "exclusive",
        "hold",
        "ignore-pbs",
        "no-kill",
        "no-requeue",
        "oversubscribe",
        "overcommit",
        "parsable",
        "requeue",
        "spread-job",
        "test-only",
        "use-min-nodes",
        "wait",
    }
)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FIRST_SPACE = re.compile(r"[ \t]+")

#: Configured options that make a derived one meaningless or invalid.
_REPLACES = {
    "mem-per-cpu": ("mem",),
    "mem-per-gpu": ("mem",),
    "exclusive": (),
}


@dataclass(frozen=True, slots=True)
class Option:
    """One sbatch option: ``name`` without dashes, ``value`` None for a bare flag."""

    name: str
    value: str | None = None

    def argument(self) -> str:
        return f"--{self.name}" if self.value is None else f"--{self.name}={self.value}"


def _parse_one(text: str, following: str | None) -> tuple[Option, bool]:
    """An option from ``text`` (and maybe its separate value); whether that was consumed."""
    if text.startswith("--"):
        long_name, eq, value = text[2:].partition("=")
        if eq:
            return Option(long_name, value), False
        if long_name not in _FLAGS and following is not None and not following.startswith("-"):
            return Option(long_name, following), True
        return Option(long_name), False
    if text.startswith("-") and len(text) >= 2:
        short, rest = text[:2], text[2:]
        name = _SHORT.get(short)
        if name is None:
            raise ConfigError(
                f"[backend.slurm] sbatch_opts: unknown short option {short!r}; write the long"
                " form (--partition=debug)"
            )
        if rest:
            return Option(name, rest.lstrip("=")), False
        if name not in _FLAGS and following is not None and not following.startswith("-"):
            return Option(name, following), True
        return Option(name), False
    raise ConfigError(
        f"[backend.slurm] sbatch_opts: {text!r} is not an option; write e.g. '--partition=debug'"
    )


def _entry_words(text: str) -> list[str]:
    """The sbatch arguments a list entry of ``sbatch_opts`` is: itself, as in an argv.

    Not split at spaces: ``"--export=ALL,GREETING=hello world"`` is one
    argument, which splitting made two and refused ("'world' is not an
    option"). An entry ``"--time 02:00:00"`` (an option that takes a value,
    and one word of value) is still read as the option and its value; any
    other entry holding two arguments is refused rather than guessed at.
    """
    entry = text.strip()
    head, *more = _FIRST_SPACE.split(entry, maxsplit=1)
    attached = "=" in head if head.startswith("--") else len(head) > 2
    if not more or attached or not head.startswith("-"):
        return [entry]
    name = _parse_one(head, None)[0].name
    words = shell_words("sbatch_opts", more[0])
    if name in _FLAGS:
        raise ConfigError(
            f"[backend.slurm] sbatch_opts: {text!r} is more than one argument (--{name}"
            " takes no value); give each argument its own entry of the list"
        )
    if len(words) != 1 or words[0].startswith("-"):
        raise ConfigError(
            f"[backend.slurm] sbatch_opts: {text!r} is more than one argument; an entry of"
            f" the list is one sbatch argument: write '--{name}=VALUE' (spaces in VALUE"
            " are kept), one entry per option"
        )
    return [head, words[0]]


def memory_option(settings: Mapping[str, Any]) -> Option | None:
    """The option of ``sbatch_opts`` that sets every job's memory (``--mem``,
    ``--mem-per-cpu``, ``--mem-per-gpu``), in place of what a step declares, if one does.

    An out-of-memory hint names it: "raise --mem" to a user who had set
    ``--mem-per-cpu`` led to a job sbatch refused (the two exclude each other).
    """
    try:
        options = parse_sbatch_opts(settings.get("sbatch_opts"))
    except ConfigError:  # refused with its own words where the options are used
        return None
    found = [o for o in options if o.name == "mem" or "mem" in _REPLACES.get(o.name, ())]
    return found[-1] if found else None


def parse_sbatch_opts(value: Any) -> list[Option]:
    """``sbatch_opts`` from settings: a list (``["--partition=debug", "-t 10"]``, an
    entry per argument, see :func:`_entry_words`), one string split as a shell
    would, or a table (``{partition = "debug", exclusive = true}``)."""
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, Mapping):
        options = []
        for key, item in value.items():
            name = str(key).lstrip("-").replace("_", "-")
            if len(name) == 1:  # `c = 2` is -c, whose long name an #SBATCH line needs
                long_name = _SHORT.get(f"-{name}")
                if long_name is None:
                    raise ConfigError(
                        f"[backend.slurm] sbatch_opts: unknown short option {key!r}; write"
                        ' the long form (partition = "debug")'
                    )
                name = long_name
            if item is True:
                options.append(Option(name))
            elif isinstance(item, str | int | float) and not isinstance(item, bool):
                options.append(_table_value(key, name, str(item)))
            elif item is not False and item is not None:  # a list or table: no one value
                raise ConfigError(
                    f"[backend.slurm] sbatch_opts: {key} must be one value (text, a number,"
                    f" or true), not {item!r}"
                )
        return _without_line_breaks(options)
    if not isinstance(value, str | list | tuple):
        raise ConfigError(
            "[backend.slurm] sbatch_opts must be a list of options, one string or a table,"
            f" not {value!r}"
        )
    if isinstance(value, str):
        words = shell_words("sbatch_opts", value)
    else:  # a list: each entry is one argument
        words = [word for item in value for word in _entry_words(str(item))]
    options = []
    i = 0
    while i < len(words):
        following = words[i + 1] if i + 1 < len(words) else None
        option, consumed = _parse_one(words[i], following)
        options.append(option)
        i += 2 if consumed else 1
    return _without_line_breaks(options)


#: The values a flag of :data:`_FLAGS` may still be given (``--exclusive=user``).
_FLAG_VALUES = {"exclusive": ("user", "mcs", "topo")}


def _table_value(key: Any, name: str, value: str) -> Option:
    """A table entry with a value; refused for a flag, where ``exclusive = "yes"``
    (meant as true) would reach sbatch as ``--exclusive=yes``, which it rejects
    at the first submission."""
    if name in _FLAGS and value not in _FLAG_VALUES.get(name, ()):
        allowed = " or ".join(f'"{v}"' for v in _FLAG_VALUES.get(name, ()))
        also = f", or one of {allowed}" if allowed else ""
        raise ConfigError(
            f"[backend.slurm] sbatch_opts: {key} = {value!r}: --{name} is a flag; write"
            f" {key} = true (false leaves it out){also}"
        )
    return Option(name, value)


#: Options ninja sets on every job itself, and why a configured one may not replace them.
_NINJAS_OWN = {
    "job-name": "every job of a run shares its name, which `squeue -n`/`scancel -n` rely on",
    "output": "each job's log goes where the launch handle and `ninja logs` look for it",
    "error": "each job's log goes where the launch handle and `ninja logs` look for it",
    "dependency": "the order of the jobs is derived from the recipe",
    "kill-on-invalid-dep": "a job whose predecessor failed must not run",
    "array": "scattered steps are made arrays, one task per slice",
    "chdir": "jobs run in the directory the recipe was compiled or run from",
    "open-mode": "a step's log keeps every attempt's output, which truncating would lose",
    "comment": "each job's comment names its step, by which ninja finds a job whose"
    " submission went unanswered",
}


#: Options that would change what submitting is, and why a configured one may not.
_NOT_FOR_NINJA = {
    "wait": "ninja submits and returns; `ninja status` follows the jobs",
    "test-only": "sbatch would only judge each job, submit none and answer no job id",
}


#: sbatch's input environment variable for an owned option, where it is not
#: ``SBATCH_<OPTION>`` (``--array`` is ``SBATCH_ARRAY_INX``).
_ENVIRONMENT_NAMES = {"array": "SBATCH_ARRAY_INX"}


def owned_environment() -> dict[str, str]:
    """sbatch's input environment variables for the options ninja owns, each with its option.

    Slurm lets such a variable beat an ``#SBATCH`` line: ``SBATCH_ARRAY_INX=0-3``
    in the submitter's shell ran every step four times, ``SBATCH_JOB_NAME`` hid
    a run's jobs from ``scancel -n``. The names follow the options ninja refuses
    in ``sbatch_opts`` (those sbatch reads no variable for are simply absent).
    """
    return {
        _ENVIRONMENT_NAMES.get(name, "SBATCH_" + name.upper().replace("-", "_")): name
        for name in (*_NINJAS_OWN, *_NOT_FOR_NINJA)
    }


def without_owned(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``environ`` for sbatch, without the variables of :func:`owned_environment`,
    and a one-line warning for each that was set."""
    owned = owned_environment()
    kept = {k: v for k, v in environ.items() if k not in owned}
    warnings = [
        f"{name} is ignored: --{option} {_why_owned(option)}; set other sbatch options in"
        " [backend.slurm] sbatch_opts"
        for name, option in owned.items()
        if name in environ
    ]
    return kept, warnings


#: Options sbatch also reads from an input environment variable of the same name
#: (``--partition`` from ``SBATCH_PARTITION``): ``man sbatch``, INPUT ENVIRONMENT
#: VARIABLES, up to Slurm 25.05. ``--cpus-per-task`` has none. Those of ninja's own
#: options are in :data:`_NINJAS_OWN`: sbatch never sees them (:func:`without_owned`).
#: ``--container-id``, ``--tres-bind`` and ``--tres-per-task`` (and ``--segment``
#: below) are newer than Slurm 22.05: an older sbatch has neither the option nor
#: the variable, so a name here only matters where sbatch reads it.
_SAME_NAMED = (
    "account",
    "acctg-freq",
    "batch",
    "constraint",
    "container",
    "container-id",
    "core-spec",
    "cpus-per-gpu",
    "delay-boot",
    "distribution",
    "exclusive",
    "export",
    "get-user-env",
    "gpu-bind",
    "gpu-freq",
    "gpus",
    "gpus-per-node",
    "gpus-per-task",
    "gres",
    "gres-flags",
    "ignore-pbs",
    "input",
    "mem-bind",
    "mem-per-cpu",
    "mem-per-gpu",
    "network",
    "no-kill",
    "overcommit",
    "partition",
    "power",
    "profile",
    "qos",
    "reservation",
    "signal",
    "spread-job",
    "thread-spec",
    "threads-per-core",
    "tres-bind",
    "tres-per-task",
    "use-min-nodes",
    "wait-all-nodes",
    "wckey",
)

#: Each option's input environment variables, the one of its own name first.
#: ``--mem`` is ``SBATCH_MEM_PER_NODE``; a variable of another memory option
#: does not beat an ``#SBATCH --mem`` line (Slurm 22.05 keeps the script's).
_INPUT_ENVIRONMENT: dict[str, tuple[str, ...]] = {
    **{name: ("SBATCH_" + name.upper().replace("-", "_"),) for name in _SAME_NAMED},
    "time": ("SBATCH_TIMELIMIT",),
    "mem": ("SBATCH_MEM_PER_NODE",),
    "segment": ("SBATCH_SEGMENT_SIZE",),
    "clusters": ("SBATCH_CLUSTERS", "SLURM_CLUSTERS"),
    "hint": ("SBATCH_HINT", "SLURM_HINT"),
    "switches": ("SBATCH_REQ_SWITCH", "SBATCH_WAIT4SWITCH"),
    "verbose": ("SBATCH_DEBUG",),
    "requeue": ("SBATCH_REQUEUE", "SBATCH_NO_REQUEUE"),
    "no-requeue": ("SBATCH_NO_REQUEUE", "SBATCH_REQUEUE"),
}

#: The variable that sets ``--time``, which a TIMEOUT's advice names.
TIMELIMIT_VARIABLE = "SBATCH_TIMELIMIT"


def shown_value(value: str) -> str:
    """``value`` of a variable as a one-line message shows it (a shell word)."""
    return shlex.quote(value) if value.isprintable() else repr(value)


def _full_name(name: str) -> str | None:
    """The option of :data:`_INPUT_ENVIRONMENT` that ``name`` is (sbatch takes an
    unambiguous start of a long option, ``--parti``, as the option)."""
    if name in _INPUT_ENVIRONMENT:
        return name
    starting = [key for key in _INPUT_ENVIRONMENT if len(name) >= 2 and key.startswith(name)]
    return starting[0] if len(starting) == 1 else None


def _variables_of(name: str) -> tuple[str, ...]:
    """The input environment variables of option ``name``."""
    full = _full_name(name)
    return _INPUT_ENVIRONMENT[full] if full is not None else ()


#: The ``SLURM_*`` variables sbatch reads as options (every ``SBATCH_*`` one is such).
_SLURM_NAMED = frozenset(
    v for names in _INPUT_ENVIRONMENT.values() for v in names if not v.startswith("SBATCH_")
)


def read_by_sbatch(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that sbatch reads as options, ninja's own among them:
    every ``SBATCH_*`` one and the ``SLURM_*`` ones of :data:`_INPUT_ENVIRONMENT`."""
    return {
        key: value
        for key, value in environ.items()
        if key.startswith("SBATCH_") or key in _SLURM_NAMED
    }


def input_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """:func:`read_by_sbatch` of ``environ``, less the variables ninja takes out of
    sbatch's environment (:func:`without_owned`)."""
    owned = owned_environment()
    return {key: value for key, value in read_by_sbatch(environ).items() if key not in owned}


_TIME = re.compile(r"(\d+)-(\d+)(?::(\d+))?(?::(\d+))?|(\d+)(?::(\d+))?(?::(\d+))?")
_UNLIMITED = frozenset({"INFINITE", "UNLIMITED", "-1"})


def time_minutes(value: str) -> int | None:
    """``value`` of ``--time`` in minutes as Slurm reads it (0: no limit; None: not a time).

    Slurm takes minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM and D-HH:MM:SS, and rounds
    seconds up to the next minute: ``5``, ``5:00`` and ``00:05:00`` are one limit.
    """
    text = value.strip()
    if text.upper() in _UNLIMITED:
        return 0
    found = _TIME.fullmatch(text)
    if found is None:
        return None
    numbers = [int(g) if g else 0 for g in found.groups()]
    if found[1] is not None:  # days-hours[:minutes[:seconds]]
        days, hours, minutes, seconds = numbers[:4]
    else:  # minutes, minutes:seconds or hours:minutes:seconds
        given = [int(g) for g in found.groups()[4:] if g is not None]
        days = 0
        hours, minutes, seconds = given if len(given) == 3 else [0, *given, 0][:3]
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    return math.ceil(total / 60)


_SIZE = re.compile(r"(\d+)([KMGT]?)", re.IGNORECASE)
_KIB_PER = {"K": 1, "": 1024, "M": 1024, "G": 1024**2, "T": 1024**3}


def memory_mib(value: str) -> int | None:
    """A memory option's ``value`` in MiB as Slurm reads it (megabytes unless a K, M, G or T
    follows; kilobytes rounded up), so ``1G`` and ``1024M`` are one size. None: not a size."""
    found = _SIZE.fullmatch(value.strip())
    if found is None:
        return None
    return math.ceil(int(found[1]) * _KIB_PER[found[2].upper()] / 1024)


#: How Slurm reads an option's value, where one value has several spellings.
_READ_AS = {
    "time": time_minutes,
    "mem": memory_mib,
    "mem-per-cpu": memory_mib,
    "mem-per-gpu": memory_mib,
}


def _meaning(name: str, value: str | None) -> object:
    """``value`` of option ``name`` as Slurm reads it (the text itself for most options,
    and for a value it would not read)."""
    read = _READ_AS.get(_full_name(name) or name)
    if value is None or read is None:
        return value
    found = read(value)
    return value if found is None else found


def _same_as_written(variable: str, name: str, value: str, written: set[str | None]) -> bool:
    """Whether ``variable=value`` asks for what every ``#SBATCH --name`` line already says
    (a time or a size compared as Slurm reads it: ``SBATCH_TIMELIMIT=5`` is
    ``--time=00:05:00``).

    For a flag, its own variable empty, ``yes`` or a number other than 0 turns it
    on, as the line does (sbatch's rule for flags).
    """
    if written == {None}:
        own = variable == _INPUT_ENVIRONMENT[name][0] if name in _INPUT_ENVIRONMENT else False
        on = value == "" or value.lower() == "yes" or (value.isdigit() and int(value) != 0)
        return own and on
    return {_meaning(name, w) for w in written} == {_meaning(name, value)}


def overriding_environment(
    environ: Mapping[str, str],
    jobs: Iterable[Sequence[Option]],
    configured: Sequence[Option],
) -> list[str]:
    """A one-line warning for each ``SBATCH_*`` variable of ``environ`` that beats an
    ``#SBATCH`` line of ``jobs`` (each job's options), naming what to do.

    sbatch lets its input environment variables win over a script's lines, and
    ninja writes ``sbatch_opts`` (and the footprint's ``--mem``) as such lines:
    a ``SBATCH_TIMELIMIT=1`` left in the shell cut a configured ``--time`` to a
    minute, unsaid, and the TIMEOUT's advice to raise ``--time`` could not work.
    The variables are still honoured (as sbatch honours them); the user is told.
    Called once per submission, with every job's options: one warning per
    variable, not per job.
    """
    if not any(key.startswith(("SBATCH_", "SLURM_")) for key in environ):
        return []  # the usual case: nothing to look up
    values: dict[str, set[str | None]] = {}
    for options in jobs:
        for option in options:
            values.setdefault(option.name, set()).add(option.value)
    from_opts = {o.name for o in configured}
    warnings = []
    for name, written in values.items():
        for variable in _variables_of(name):
            value = environ.get(variable)
            if value is None or _same_as_written(variable, name, value, written):
                continue
            line = f"--{name}" if len(written) > 1 else Option(name, next(iter(written))).argument()
            source = (
                "[backend.slurm] sbatch_opts" if name in from_opts else "what the steps declare"
            )
            warnings.append(
                f"{variable}={shown_value(value)} in the environment overrides the"
                f" '#SBATCH {line}' line ninja writes from {source} (sbatch lets SBATCH_*"
                f" variables beat a script's lines); unset {variable}, or put the --{name}"
                " you want in [backend.slurm] sbatch_opts and unset it"
            )
    return warnings


def _why_owned(option: str) -> str:
    """Why ninja will not take ``option`` from the user (in sbatch_opts or the environment)."""
    if option in _NINJAS_OWN:
        return f"is set by ninja on every job ({_NINJAS_OWN[option]})"
    return f"cannot be used with ninja ({_NOT_FOR_NINJA[option]})"


def _without_line_breaks(options: list[Option]) -> list[Option]:
    """``options``, unless one holds a line break (each becomes an ``#SBATCH`` line) or
    replaces one ninja sets itself, which would silently undo what it is for."""
    for option in options:
        # sbatch takes any unambiguous start of a long option (--depend=...)
        owned = next(
            (
                name
                for name in (*_NINJAS_OWN, *_NOT_FOR_NINJA)
                # sbatch takes any unambiguous start of a long option (`--jo` is --job-name)
                if name == option.name or (len(option.name) >= 2 and name.startswith(option.name))
            ),
            None,
        )
        if owned is not None:
            named = f"--{option.name}{'' if owned == option.name else f' (--{owned})'}"
            raise ConfigError(
                f"[backend.slurm] sbatch_opts: {named} {_why_owned(owned)}; remove it from"
                " sbatch_opts"
            )
        if line_break_in(option):
            shown = option.name if option.value is None else f"{option.name}={option.value}"
            raise ConfigError(
                f"[backend.slurm] sbatch_opts: {shown!r} holds a line break, which an #SBATCH"
                " line cannot hold; write the option on one line"
            )
    return options


def log_path(path: str) -> str:
    r"""``path`` as ``--output``/``--error`` must say it for Slurm to open exactly it.

    Slurm reads those values as patterns (``%x`` is the job name, ``%j`` its
    id), unless the value holds a backslash, which turns patterns off and is
    itself an escape (``\\`` is one backslash). A step's log under a
    directory named ``100%x`` or ``a\b`` went to a directory that does not
    exist, and the job failed before its tool ran, as "signal 53".
    """
    if "\\" in path:
        return path.replace("\\", "\\\\")
    return path.replace("%", "%%")


def job_name(run_id: str) -> str:
    """The name every job of one run shares, so ``squeue -n``/``scancel -n`` find them all."""
    return f"shinobi-{run_id}" if run_id else "shinobi"


def launch_job_name(handle: LaunchHandle) -> str:
    """The name every job of a launch was submitted with, as its handle recorded it."""
    return str(handle.extra.get("job_name") or job_name(handle.run_id))


def resource_options(resources: Resources | None) -> list[Option]:
    """``--cpus-per-task`` / ``--mem`` (``--exclusive``, ``--mem=0``) for a declared footprint."""
    if resources is None:
        return []
    options = []
    if resources.cpus == "all":
        options.append(Option("exclusive"))
    elif resources.cpus is not None:
        options.append(Option("cpus-per-task", str(max(1, math.ceil(resources.cpus)))))
    if resources.memory is not None:
        options.append(Option("mem", f"{max(1, math.ceil(resources.memory / 1024**2))}M"))
    elif resources.cpus == "all":
        # --exclusive alone gives every CPU but only DefMemPerCPU of memory for each
        # (4G of an 8G node), and the "whole node" job was killed for memory: --mem=0
        # is all of the node's (a memory option in sbatch_opts replaces it, as any)
        options.append(Option("mem", "0"))
    return options


def overridden_by(configured: Iterable[Option]) -> frozenset[str]:
    """The derived options that ``configured`` sets itself or replaces."""
    names = set()
    for option in configured:
        names.add(option.name)
        names.update(_REPLACES.get(option.name, ()))
    return frozenset(names)


def merge_options(
    derived: Iterable[Option],
    configured: Iterable[Option],
    overridden: frozenset[str] | None = None,
) -> list[Option]:
    """``derived`` with every option ``configured`` also sets (or replaces) left out.

    ``overridden`` is :func:`overridden_by` of ``configured``, for a caller
    that merges the same configured options into many jobs.
    """
    configured = list(configured)
    if overridden is None:
        overridden = overridden_by(configured)
    return [o for o in derived if o.name not in overridden] + configured


def line_break_in(option: Option) -> bool:
    """Whether ``option`` holds a line break, which no ``#SBATCH`` line can hold."""
    text = option.name if option.value is None else f"{option.name}{option.value}"
    return "\n" in text or "\r" in text


def directive(option: Option) -> str:
    """``#SBATCH --name=value``, quoted when the value has spaces or quotes.

    A value with a line break would end the directive at the break and make
    the rest of it a line of the script, which bash runs as a command:
    :func:`batch_script` refuses such a script (callers that know where a
    value came from refuse it sooner, naming the setting).
    """
    return directive_line(option.name, option.value)


#: What sbatch's directive parser reads as the end of a value unless it is quoted.
_QUOTED_IN_DIRECTIVES = re.compile(r"[\s#\"']")


def directive_line(name: str, value: str | None) -> str:
    """:func:`directive` of ``Option(name, value)``, for a caller writing many jobs'
    lines, which need not make an :class:`Option` of each (one is a few
    microseconds, as long as writing its line)."""
    if value is None:
        return f"#SBATCH --{name}"
    # sbatch reads a backslash in a directive as an escape (``\\`` is one):
    # unescaped, --chdir=/data/a\b sent the job to /tmp, "couldn't chdir".
    value = value.replace("\\", "\\\\")
    # outside quotes it stops at whitespace and reads an unquoted `#` as the start
    # of a comment: --chdir=/data/run#2 sent the job to /data/run, then to /tmp
    if _QUOTED_IN_DIRECTIVES.search(value):
        escaped = value.replace('"', '\\"')
        return f'#SBATCH --{name}="{escaped}"'
    return f"#SBATCH --{name}={value}"


def refuse_line_breaks(
    directives: Sequence[str], options_of: Callable[[], Iterable[Option]]
) -> None:
    """Refuse directives that hold a line break; one test for all of them, in C.

    ``options_of`` gives the options the directives were written from, asked
    for only to name the broken one: a caller that wrote its lines without
    making an :class:`Option` of each makes them only then.
    """
    together = "\n".join(directives)
    if together.count("\n") < max(len(directives), 1) and "\r" not in together:
        return
    broken = next(o for o in options_of() if line_break_in(o))
    raise UsageError(
        f"cannot write the sbatch option {broken.argument()!r}: it holds a line break,"
        " which an #SBATCH line cannot hold; rename the directory, name or setting it"
        " comes from"
    )


def batch_script(
    options: Sequence[Option],
    body: Sequence[str],
    *,
    comments: Sequence[str] = (),
) -> str:
    """A whole script: shebang, directives, ``comments`` (``# ...``), ``body``.

    A cab's environment belongs in ``body``, on the tool's own command line
    (:func:`with_environment`), not in the script around it.

    A comment that holds line breaks (a note quoting a name) becomes one
    ``#`` line per line of it: the rest of it must not become a command.
    """
    directives = [directive(o) for o in options]
    refuse_line_breaks(directives, lambda: options)
    return script_text(directives, body, comments)


def script_text(directives: Sequence[str], body: Sequence[str], comments: Sequence[str]) -> str:
    """:func:`batch_script` from its ``#SBATCH`` lines, already written (and checked
    by :func:`refuse_line_breaks`)."""
    lines = ["#!/bin/bash", *directives]
    said = "\n".join(comments)
    if said.count("\n") <= len(comments) - 1 and "\r" not in said:  # the usual case
        lines += [f"# {c}" if c else "#" for c in comments]
    elif comments:  # a comment holding line breaks: a "#" line for each of its lines
        lines += [f"# {part}" if part else "#" for part in _LINE_BREAK.split(said)]
    lines.extend(body)
    lines.append("")  # the last line's break, joined with the rest: no copy of the script
    script = "\n".join(lines)
    if not script.isascii():  # (a flag CPython keeps: no scan for nearly every script)
        _refuse_undecodable(script)
    if "\0" in script:
        _refuse_nul(script)
    return script


def _refuse_nul(script: str) -> None:
    """Refuse a script holding a NUL byte (an argument's value): a native run
    refuses it, as no program can be passed one, but bash reads the script
    with the byte dropped and ran another argument than the recipe's."""
    at = script.index("\0")
    raise UsageError(
        "a job script would hold a NUL byte, which no program can be passed (near"
        f" {_near(script, at, at)!r}); check the value that holds it"
    )


def _near(script: str, start: int, end: int) -> str:
    """The script's text around ``start``..``end``, showable whatever it holds."""
    return script[max(0, start - 30) : end + 10].encode("utf-8", "backslashreplace").decode()


def _refuse_undecodable(script: str) -> None:
    """Refuse a script holding a name that is not UTF-8 (kept by Python as lone surrogates).

    It could be neither written nor shown as what would run, and it was found
    only while submitting, half-way through a workflow.
    """
    try:
        script.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UsageError(
            f"a job script would hold a name that is not valid UTF-8 (near"
            f" {_near(script, exc.start, exc.end)!r}); rename the file, or run the recipe"
            " with `ninja run`"
        ) from None


#: What follows the payload in a job script. A command that died by signal N
#: leaves exit status 128+N in the shell, and so does a docker or podman client
#: whose container died by signal N; Slurm would record either as a plain exit
#: (exit 137 shows as "9:0", an exit code of 9). Ending the job by that same
#: signal makes Slurm record the signal (0:9), which ninja reads as a kill by
#: SIGKILL, the out-of-memory killer's signature, whatever ran the payload.
#: Signals whose default action does not end a process (SIGCHLD, SIGCONT, the
#: stop signals, SIGURG, SIGWINCH: 17-23 and 28) are not relayed: SIGSTOP
#: would suspend the job for ever. Their exit status is kept as it is.
#: The signal is sent by a ``/bin/sh`` that replaces the script (same pid):
#: bash itself ignores a SIGQUIT sent to it, so a tool that died of SIGQUIT
#: read "exited with code 131"; should the signal not end it, it exits as before.
SIGNAL_RELAY = (
    "rc=$?",
    'case "$rc" in 129|13[0-9]|14[0-4]|15[2-5]|15[7-9]|1[6-8][0-9]|19[0-2])'
    """ exec /bin/sh -c 'kill -s "$1" "$$"; exit "$2"' sh "$((rc - 128))" "$rc" ;; esac""",
    'exit "$rc"',
)


def with_environment(argv: Sequence[str], env: Mapping[str, str] | None) -> list[str]:
    """``argv`` with a cab's ``env`` set for the tool alone, in the one form
    compiled jobs use too (:func:`shinobi.offload.jobs.env_command`: ``env --
    K=V ... tool``, a program whose path holds ``=`` run through ``bash -c 'exec
    -- "$@"'``). Quoting is :func:`command_lines`' ``shlex.join``."""
    return env_command(argv, env)


#: The signals a job's shell gets when Slurm ends the job early: ``scancel``
#: and the time limit send SIGTERM (SIGKILL follows ``KillWait`` later).
_ENDING_SIGNALS = "TERM INT HUP"


def payload_line(
    argv: Sequence[str], stop: Sequence[str] | None = None, probe: Sequence[str] | None = None
) -> str:
    """The script line that runs ``argv``; with ``stop``, run as the job is ended.

    A container's payload belongs to the engine's daemon, not to the job:
    when Slurm ends the job, the shell dies of SIGTERM, Slurm kills what is
    left of the job (the engine's client among it) and the container runs on
    unseen. So the shell traps the signal and runs ``stop`` (``docker rm
    -f``) first. The payload runs in the background for that: a shell waits
    for a foreground command to finish before it runs a trap, and ``wait``
    returns at once. The trap is reset after the payload (:func:`command_lines`).

    With ``probe`` (see ``Rendered.oom_probe``), the engine is asked once the
    payload ended whether it killed it for memory, then ``stop`` removes the
    container: a kill so ends the job as a SIGKILL would (status 137), which
    ``ninja status`` reads as out of memory, even when the main process exited 0.
    """
    if not stop:
        return shell_line(argv)
    action = shlex.quote(f"{shlex.join(stop)} >/dev/null 2>&1")
    line = f'trap {action} {_ENDING_SIGNALS}; {shlex.join(argv)} & wait "$!"'
    if not probe:
        return line
    said = shlex.quote(
        "shinobi: the container engine killed the step for using more memory than its"
        " limit (OOMKilled)"
    )
    return (
        f"{line}; rc=$?; oom=$({shlex.join(probe)} 2>/dev/null); {shlex.join(stop)}"
        f' >/dev/null 2>&1; if [ "$oom" = true ]; then echo {said} >&2;'
        ' [ "$rc" -gt 128 ] || rc=137; fi; (exit "$rc")'
    )


#: What ``shlex.quote`` leaves unquoted is a word of only these characters (its own
#: test): a text this finds nothing in is its own quoted form.
SHELL_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII).search


def shell_line(argv: Sequence[str]) -> str:
    """``shlex.join(argv)``. Nearly every command line needs no quote at all (a
    compile writes one per job and slice): one scan of its words run together
    says so, rather than a ``shlex.quote`` call per word."""
    if all(argv) and SHELL_UNSAFE("".join(argv)) is None:  # an empty word needs ''
        return " ".join(argv)
    return " ".join(map(shlex.quote, argv))


def relay_lines(stopped: bool = False) -> list[str]:
    """What follows a payload: its status kept, its trap undone, a death by signal relayed."""
    first, *rest = SIGNAL_RELAY
    return [first, *([f"trap - {_ENDING_SIGNALS}"] if stopped else []), *rest]


def command_lines(argv: Sequence[str], stop: Sequence[str] | None = None) -> list[str]:
    """The script lines that run ``argv`` as the job's payload (see :data:`SIGNAL_RELAY`)."""
    return [payload_line(argv, stop), *relay_lines(bool(stop))]


def exec_lines(argv: Sequence[str]) -> list[str]:
    """The script lines of a job whose only work is ``argv``: ``exec`` it.

    The job's process then *is* the tool, so Slurm records its own wait
    status: a tool that exits 130 is "exit 130", one killed by SIGKILL is
    "signal 9". :data:`SIGNAL_RELAY` has to guess between the two from the
    shell's ``$?``, and reads every exit from 129 to 192 as a signal, which
    is the right guess only for a payload that is a container client.
    """
    return [f"exec {shlex.join(argv)}"]


def command_line(argv: Sequence[str]) -> str:
    """:func:`command_lines` on one line, for ``sbatch --wrap``."""
    return "; ".join(command_lines(argv))
