"""The command's own script: mounted when it is a project file nothing else shows.

A recipe often runs a script kept next to it by absolute path
(``command=[str(Path(__file__).parent / "tools" / "wsclean.py"), ...]``) from
a working directory elsewhere. Natively that works; in a container the file
was simply not there, and the step died with the runtime's
``exec /proj/recipes/tools/wsclean.py failed: No such file or directory``
(exit 127), which reads as "the image lacks it" and tells the user nothing.

Two designs were weighed:

(a) mount such a script read-only at its own path;
(b) mount nothing extra, and explain the failure afterwards.

(a) is chosen, with (b) behind it for every script (a) leaves alone:

* the command names a host file by its host path, so running that file is
  what the cab says, and what it does natively. Refusing to show it would make
  the user restructure a project that is right; a mount makes the container
  run exactly what ``ninja run --backend native`` would. (b) alone keeps the
  container's view to what the cab declares, but fails a correct recipe on
  every container backend, and only after the fact: for a compiled job, after
  its time in the queue, with nobody there to read an explanation;
* the one way (a) could surprise is by hiding a program the image provides
  at the same path (``/usr/bin/python3``, a conda or venv console script, a
  pip ``--user`` install). So only a *project* script is mounted: a regular
  file, not an ELF program (a compiled tool needs the host's libraries, and
  is exactly what an image ships), not under the places software is installed
  (``/usr``, ``/bin``, ``/sbin``, ``/lib*``, ``/opt``, ``/etc``, ``/var``,
  ``/root``, ``/nix``, ... and any ``.local``, ``site-packages`` tree), and not
  inside a virtualenv or conda environment (an ancestor holding
  ``pyvenv.cfg`` or ``conda-meta``). Such paths belong to the image;
* only the file is mounted, read-only: the step cannot change it, and
  nothing else of its directory becomes visible (a sibling module it imports
  must be declared, or live under the working directory);
* the mount is part of the planned command, so a dry run shows it and a
  compiled job (``ninja compile --container-runtime ...``) carries it too;
* whatever is not mounted and makes the step fail as a missing program
  (exit 126 or 127, an interpreter's 2, apptainer's own ``FATAL``) gets (b):
  the failure says the file is on this host but not in the container, why it
  was not mounted, and the three fixes. It is said only when the failure's
  own words name the file (an interpreter's 2 is also argparse's "bad
  option"), so a tool's own failure is never blamed on the mounts. A script
  that is visible but whose ``#!`` interpreter the image lacks is reported
  naming that interpreter, which the engines' "No such file or directory"
  about the script itself does not.

"The script" is ``argv[0]`` when written as a path, and, when ``argv[0]`` is
an interpreter (``python3``, ``bash``, ``perl``, ...),
its first argument that is not an option nor an option's value (python's
``-W ignore``, the shells' ``-o pipefail``; ``-eu`` is two flags), unless an
option such as ``-c`` or ``-m`` says the program comes from elsewhere. When
both the interpreter and its script are unseen, a failure naming the script is
blamed on the script: a shell that cannot open it names itself too. Common
wrappers in front (``env``, ``timeout``, ``nice``, ``stdbuf``, ``nohup``,
``time``, ``busybox``) are looked through first: natively ``timeout 30 sh
tools/x.sh`` runs the script, so the container must see it too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from shinobi.backends.shebang import crlf_advice
from shinobi_containers.mounts import ROOT_PROGRAM_TREES, HostView, Mount, covers

__all__ = [
    "FileView",
    "Script",
    "command_scripts",
    "script_mounts",
    "unseen_script_reason",
]

#: Where software is installed: an image keeps its own programs here.
_INSTALLED = (
    "/usr",
    *ROOT_PROGRAM_TREES,
    "/opt",
    "/etc",
    "/var",
    "/run",
    "/srv",
    "/boot",
    "/root",
    "/nix",
    "/snap",
    "/gnu",
    "/proc",
    "/sys",
    "/dev",
)
#: Path components that mark an installed tree wherever it sits.
_INSTALLED_PARTS = frozenset({".local", "site-packages", "dist-packages", "node_modules"})
#: Files that make their directory an installed Python environment.
_ENVIRONMENT_MARKS = ("pyvenv.cfg", "conda-meta")
#: What such an environment installs: a project kept elsewhere under its
#: directory (a tox or nox environment's tmp/) is still a project.
_ENVIRONMENT_TREES = frozenset(
    {"bin", "Scripts", "lib", "lib64", "include", "share", "libexec", "etc", "pkgs"}
)
_INTERPRETER = re.compile(
    r"(python|pypy|perl|ruby|Rscript|julia|node|bash|sh|dash|zsh|ksh|lua|tclsh|php)[\d.]*"
)


@dataclass(frozen=True, slots=True)
class _Options:
    """How an interpreter reads the options before its script, so that an option's
    value is not taken for the script, and a flag cluster (``bash -eu``) is flags.

    ``value``: letters taking a value, glued (``-Wignore``) or the next word
    (``-W ignore``); ``glued``: letters whose value is only ever the rest of their
    word (perl's ``-Ilib``, ``-l``); ``inline``: letters saying the program comes
    inline, from a module or from stdin, so no script file follows; ``plus``:
    whether ``+o name`` is an option too (the shells).
    """

    value: str = ""
    glued: str = ""
    inline: str = ""
    long_value: frozenset[str] = frozenset()
    long_inline: frozenset[str] = frozenset()
    plus: bool = False


_SHELL = _Options(
    value="oO", inline="cs", long_value=frozenset({"--rcfile", "--init-file"}), plus=True
)
#: Each interpreter's options, from its manual; a letter not named here is a flag.
_OPTIONS = {
    "python": _Options(value="WX", inline="cm", long_value=frozenset({"--check-hash-based-pycs"})),
    "perl": _Options(glued="0CdDFiIlmMVx", inline="eE"),
    "ruby": _Options(value="rICE", inline="e"),
    "node": _Options(
        value="rC",
        inline="ep",
        long_value=frozenset({"--require", "--import", "--loader", "--conditions"}),
        long_inline=frozenset({"--eval", "--print"}),
    ),
    "Rscript": _Options(inline="e"),
    "julia": _Options(value="CJLtpH", inline="eE"),
    "lua": _Options(value="l", inline="e"),
    "php": _Options(value="cdz", inline="r"),
    **dict.fromkeys(("bash", "sh", "dash", "zsh", "ksh"), _SHELL),
}
_OPTIONS["pypy"] = _OPTIONS["python"]
#: Exit codes of a program that could not be started: the shell's and the
#: runtime's 126/127, and an interpreter that could not open its script (2).
_NOT_STARTED = frozenset({2, 126, 127})
_ELF = b"\x7fELF"


class FileView(HostView, Protocol):
    """What deciding about a script needs to know about the host, on top of paths."""

    def isfile(self, path: str) -> bool: ...

    def head(self, path: str, size: int) -> bytes | None:
        """The first ``size`` bytes of ``path``, or None when it cannot be read."""
        ...


@dataclass(frozen=True, slots=True)
class Script:
    """A file the command runs: the word naming it, its path as the container resolves
    it, its real path on the host, and whether it is mounted (and why not)."""

    word: str
    path: str
    real: str
    mountable: bool
    why_not: str = ""
    installed: bool = False


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """How a program that runs another (``timeout 30 CMD``) reads the words before it.

    ``value``: short options taking a value, glued (``-n5``) or the next word;
    ``long_value``: long options taking the next word when written without ``=``;
    ``operands``: words before the command that are no option (timeout's
    DURATION); ``assignments``: ``NAME=VALUE`` words may come first (env);
    ``lost``: options after which the command cannot be read from here (env's
    ``-C DIR`` runs it in another directory, ``-S`` splits one word into many).
    """

    value: str = ""
    long_value: frozenset[str] = frozenset()
    operands: int = 0
    assignments: bool = False
    lost: frozenset[str] = frozenset()


#: The common wrappers, from their manuals (GNU coreutils and busybox agree on these).
_WRAPPERS = {
    "env": _Wrapper(
        value="uCS",
        long_value=frozenset({"--unset", "--chdir", "--split-string"}),
        assignments=True,
        lost=frozenset({"-C", "-S", "--chdir", "--split-string"}),
    ),
    "timeout": _Wrapper(value="sk", long_value=frozenset({"--signal", "--kill-after"}), operands=1),
    "nice": _Wrapper(value="n", long_value=frozenset({"--adjustment"})),
    "stdbuf": _Wrapper(value="ioe", long_value=frozenset({"--input", "--output", "--error"})),
    "nohup": _Wrapper(),
    "time": _Wrapper(value="fo", long_value=frozenset({"--format", "--output"})),
    "busybox": _Wrapper(),  # busybox APPLET ...: the applet is the command
}


def _unwrap(argv: Sequence[str]) -> list[str]:
    """The command behind the wrappers ``argv`` starts with (``timeout 30``, ``nice -n
    5``, ``env X=1``, ...), or ``argv`` itself; empty when a wrapper's options leave
    the command unknown (``env -C DIR``)."""
    words = list(argv)
    while words and os.path.basename(words[0]) in _WRAPPERS:
        words = _behind(words[1:], _WRAPPERS[os.path.basename(words[0])])
    return words


def _behind(rest: list[str], wrapper: _Wrapper) -> list[str]:
    """The words after one wrapper's options, assignments and operands."""
    while rest:
        word = rest[0]
        if word == "--":
            rest = rest[1:]
            break
        if word.startswith("-") and len(word) > 1:
            option = word.split("=", 1)[0] if word.startswith("--") else word[:2]
            if option in wrapper.lost:
                return []
            takes_next = (
                option in wrapper.long_value and "=" not in word
                if word.startswith("--")
                else word[1] in wrapper.value and len(word) == 2
            )
            rest = rest[2:] if takes_next else rest[1:]
        elif wrapper.assignments and ("=" in word or word == "-"):  # env's `-` is its -i
            rest = rest[1:]
        else:
            break
    return rest[wrapper.operands :]


def _cluster(letters: str, options: _Options) -> str:
    """What one option word's letters (``eu`` of ``-eu``) say: "inline" (no script
    file follows), "next" (the next word is the last letter's value) or "" (flags)."""
    for index, letter in enumerate(letters):
        if letter in options.inline:
            return "inline"
        if letter in options.glued:
            return ""
        if letter in options.value:
            return "" if letters[index + 1 :] else "next"
    return ""


def _script_argument(arguments: Sequence[str], options: _Options) -> str | None:
    """An interpreter's script: its first argument that is not an option, nor an
    option's value; None when an option says the program comes from elsewhere."""
    words = iter(arguments)
    for word in words:
        if word == "--":
            return next(words, None)
        if word == "-":
            return None  # the program comes from stdin
        if word.startswith("--"):
            name = word.split("=", 1)[0]
            if name in options.long_inline:
                return None
            if name in options.long_value and "=" not in word:
                next(words, None)
            continue
        if word.startswith("-") or (options.plus and word.startswith("+")):
            said = _cluster(word[1:], options)
            if said == "inline":
                return None
            if said == "next":
                next(words, None)
            continue
        return word
    return None


def command_scripts(argv: Sequence[str], cwd: str) -> list[tuple[str, str]]:
    """The files ``argv`` runs, as (the word naming it, its absolute path):
    ``argv[0]`` when written as a path, and an interpreter's script argument
    (see the module docstring)."""
    words = _unwrap(argv)
    if not words:
        return []
    found = []
    program = words[0]
    if "/" in program:  # a bare name is looked up on the image's PATH
        found.append((program, os.path.normpath(os.path.join(cwd, program))))
    interpreter = _INTERPRETER.fullmatch(os.path.basename(program))
    if interpreter is not None:
        script = _script_argument(words[1:], _OPTIONS.get(interpreter[1], _Options()))
        if script is not None:
            found.append((script, os.path.normpath(os.path.join(cwd, script))))
    return found


def _installed_place(path: str, host: FileView) -> str | None:
    """Why ``path`` belongs to installed software rather than a project, or None."""
    for prefix in _INSTALLED:
        if covers(prefix, path):
            return f"it is under {prefix}, where an image keeps its own programs"
    if _INSTALLED_PARTS.intersection(path.split("/")):
        return "it is in an installed tree, where an image keeps its own programs"
    directory = os.path.dirname(path)
    while directory != "/":
        installed = path[len(directory) + 1 :].split("/", 1)[0] in _ENVIRONMENT_TREES
        if installed and any(host.exists(os.path.join(directory, m)) for m in _ENVIRONMENT_MARKS):
            return f"it is installed in the Python environment {directory}"
        directory = os.path.dirname(directory)
    return None


def _describe_script(word: str, path: str, host: FileView) -> Script | None:
    """The script at ``path`` with the verdict on mounting it; None if no file is there."""
    if not host.isfile(path):
        return None
    real = host.realpath(path)
    for spelled in dict.fromkeys((path, real)):
        place = _installed_place(spelled, host)
        if place is not None:
            return Script(word, path, real, False, place, installed=True)
    head = host.head(real, len(_ELF))
    if head is None:
        return Script(word, path, real, False, "it could not be read when the step was planned")
    if head == _ELF:
        why = "it is a compiled program, which needs the host's own libraries"
        return Script(word, path, real, False, why)
    return Script(word, path, real, True)


def _visible(mounts: Sequence[Mount], path: str) -> bool:
    return any(covers(mount.target, path) for mount in mounts)


def _mount_for(script: Script, mounts: Sequence[Mount]) -> Mount | None:
    """The read-only mount that makes ``script`` resolve in the container, or None.

    A spelled path the mounts already show still needs its symlink's target
    (identity-mounted); a spelled path they do not show gets the file itself.
    """
    if not _visible(mounts, script.path):
        return Mount(script.real, script.path, readonly=True)
    if not _visible(mounts, script.real):
        return Mount(script.real, script.real, readonly=True)
    return None


def script_mounts(
    argv: Sequence[str], cwd: str, mounts: Sequence[Mount], host: FileView
) -> list[Mount]:
    """Read-only mounts of the project scripts ``argv`` runs that ``mounts`` do not show."""
    added: list[Mount] = []
    for word, path in command_scripts(argv, cwd):
        script = _describe_script(word, path, host)
        if script is None or not script.mountable:
            continue
        mount = _mount_for(script, [*mounts, *added])
        if mount is not None:
            added.append(mount)
    return added


#: What podman's init says when it cannot exec the command; it names no path.
_PODMAN_NO_PROGRAM = "failed to exec pid1"


def _blamed(script: Script, first: bool, stderr: str) -> bool:
    """Whether the failure's own words are about ``script``: the runtime, shell or
    interpreter names the file it could not open (podman's init names none, and
    can only mean the program itself). An interpreter's exit 2 is also what
    argparse gives a bad option, which must not be blamed on the mounts."""
    if _exec_failed(script, stderr):
        return True
    names = (script.word, script.path)
    for line in stderr.splitlines():
        # a program that prints its own diagnostic has started: a shell puts its
        # name before each of them (``/bin/sh: nope: not found``), which is no
        # word about the shell, but about the command it ran
        for name in names:
            if line.startswith(f"{name}:"):
                line = line[len(name) + 1 :]
                break
        if any(name in line for name in names):
            return True
    return first and _PODMAN_NO_PROGRAM in stderr


def unseen_script_reason(
    argv: Sequence[str],
    cwd: str,
    mounts: Sequence[Mount],
    host: FileView,
    *,
    engine: str,
    returncode: int,
    stderr: str,
    engine_failed: bool = False,
) -> str | None:
    """Why a step that could not start its program failed, when that program (or an
    interpreter's script) is a file on this host that the container cannot see.

    None when the exit does not look like a program that could not be
    started, when the failure's words are not about the file, or when every
    script the command names is visible.
    """
    if returncode not in _NOT_STARTED and not engine_failed:
        return None
    program = _unwrap(argv)[:1]
    for word, path in _script_first(command_scripts(argv, cwd), program):
        script = _describe_script(word, path, host)
        if script is None or _mount_for(script, mounts) is None:
            continue
        if _blamed(script, [word] == program, stderr):
            return _unseen_reason(script, engine, returncode)
    return _interpreter_reason(argv, cwd, host, engine, returncode, stderr)


def _script_first(found: list[tuple[str, str]], program: list[str]) -> list[tuple[str, str]]:
    """An interpreter's script before the interpreter: a shell that cannot open its
    script names itself first (``/bin/sh: 0: cannot open x.sh``), and the script is
    what is missing; an interpreter the image lacks is never named with its script."""
    return sorted(found, key=lambda pair: [pair[0]] == program)


def _exec_failed(script: Script, stderr: str) -> bool:
    """Whether the runtime itself could not exec ``script`` (tini's and apptainer's
    ``exec PATH failed``, runc's ``exec: "PATH"``, podman's init, which names no
    path), rather than the script running and failing on a missing file of its own."""
    for name in (script.word, script.path):
        if f"exec {name} failed" in stderr or f'exec: "{name}"' in stderr:
            return True
    return _PODMAN_NO_PROGRAM in stderr


#: How the runtimes say exec found no file: for a script that is there, its interpreter.
_EXEC_ENOENT = ("no such file", "shared library is likely missing")


def _interpreter_reason(
    argv: Sequence[str], cwd: str, host: FileView, engine: str, returncode: int, stderr: str
) -> str | None:
    """Why a visible script could not be started: the interpreter its ``#!`` line
    names is not in the image (a host venv's python, or a ``\\r`` from Windows
    line ends). The runtimes say "no such file" of the script itself, or (apptainer)
    blame a shared library, and the script is right there."""
    words = _unwrap(argv)
    if not words or "/" not in words[0]:
        return None
    said = stderr.lower()
    if returncode not in (126, 127, 255) or not any(text in said for text in _EXEC_ENOENT):
        return None
    script = _describe_script(words[0], command_scripts(words, cwd)[0][1], host)
    if script is None:
        return None
    head = host.head(script.real, 256) or b""
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode(errors="replace").strip(" \t")
    if line.endswith("\r"):  # whoever said "no such file": the kernel, or env of python3\r
        return f"exited with code {returncode}: {crlf_advice(script.path)}"
    if not _exec_failed(script, stderr):
        return None
    interpreter = line.split(" ", 1)[0]
    return (
        f"exited with code {returncode}: {script.path} is there, but the image cannot"
        f" run the interpreter its #! line names ({interpreter!r}); start it with one the"
        f" image has (#!/usr/bin/env python3, say, or put the interpreter first in the"
        " command)"
    )


def _unseen_reason(script: Script, engine: str, returncode: int) -> str:
    said = f"exited with code {returncode}: {script.path} is a file on this host that the"
    said += f" {engine} container cannot see ({script.why_not or 'it is not mounted'},"
    said += " so shinobi does not mount it); "
    if script.installed:
        return said + (f"name a program the image has, or mount it with backend.{engine}.run_flags")
    return said + (
        "move it under the working directory, declare it as an input, or mount it with"
        f" backend.{engine}.run_flags"
    )
