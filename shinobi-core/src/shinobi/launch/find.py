"""Finding launches: what ``ninja status HANDLE`` and ``ninja logs NAME`` accept.

A launch can be named by its handle file, by the folder holding one, by its
run id (or a unique start of it), or by its recipe's name (the latest launch
of that recipe in this workspace). A workspace's launches are the union of the index entries for
it and the handle files actually under ``<workdir>/.shinobi/``, so a lost
index does not hide a launch and a moved workdir does not resurrect one.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from shinobi.errors import MachineRefused, UsageError
from shinobi.launch.folders import handle_paths, unended
from shinobi.launch.handle import (
    HANDLE_NAME,
    DamagedHandle,
    ForeignHandle,
    LaunchHandle,
    read_handle,
)
from shinobi.launch.index import list_launches
from shinobi.wording import listed

if TYPE_CHECKING:
    from shinobi.local_runs import LocalRun

__all__ = [
    "LocalRunNamed",
    "all_launches",
    "damaged_handles",
    "find_launch",
    "handle_files",
    "launch_ids_starting",
    "stop_hint",
    "unended_launches",
    "workspace",
    "workspace_launches",
]


class LocalRunNamed(UsageError):
    """A launch was asked for by the name of a run made here with ``ninja run``.

    ``runs`` are the runs the name matched, for a command that can say more
    about them (``ninja cancel``: how to stop one).
    """

    def __init__(self, message: str, runs: list[LocalRun]) -> None:
        super().__init__(message)
        self.runs = runs


def workspace(workdir: str | Path | None = None) -> Path:
    """``--workdir``, else the configured ``execution.workdir``, else the cwd."""
    if workdir is not None:
        return Path(workdir).resolve()
    from shinobi.config import load_config

    return load_config().execution.workdir_path() or Path.cwd().resolve()


def handle_files(workdir: Path) -> list[Path]:
    """Every per-launch handle under ``<workdir>/.shinobi/<recipe>/<run-id>/``; none
    under ``.shinobi/runs``, which holds local runs (and, maybe, a user's own files)."""
    root = workdir / ".shinobi"
    if not root.is_dir():
        from shinobi.local_runs import refuse_unreachable_records

        refuse_unreachable_records(workdir)
        return []
    return sorted(handle_paths(root))


def unended_launches(workdir: Path) -> list[LaunchHandle]:
    """The launches under the workspace not recorded as ended (see
    :data:`~shinobi.launch.folders.ENDED_NAME`), oldest first; damaged ones left out.

    What a ``ninja run`` starting there asks, so it costs a listing of
    ``.shinobi`` and of each recipe's folder in it (never of ``.shinobi/runs``),
    and a handle read only for each launch not known to have ended.
    """
    found = []
    for path in unended(workdir):
        try:
            found.append(read_handle(path))
        except UsageError:  # damaged, or gone meanwhile: nothing to ask about
            continue
    return sorted(found, key=lambda h: h.created)


def workspace_launches(workdir: Path) -> tuple[list[LaunchHandle], list[str]]:
    """The workspace's launches (oldest first) and notes about entries that are gone
    or damaged."""
    notes: list[str] = []
    try:
        entries = list_launches(workdir)
    except MachineRefused as exc:  # the launches of this workspace are found without it
        entries = []
        notes.append(f"{exc}; the launches listed are those found in {workdir / '.shinobi'}")
    read, damaged = _read_handles(workdir, [Path(e.handle) for e in entries])
    notes += [
        f"launch {entry.recipe}/{entry.run_id}: its handle {entry.handle} is gone"
        " (deleted by hand?); `ninja clean --launches` forgets it"
        for entry in entries
        if not os.path.exists(entry.handle)
    ]
    notes += [
        f"launch handle {exc.path} is {exc.detail}: its launch cannot be shown to this user"
        if isinstance(exc, ForeignHandle)
        else f"launch handle {exc.path} is damaged ({exc.detail}): its launch cannot be shown;"
        " `ninja clean --launches --force` removes it"
        for exc in damaged
    ]
    return sorted(read, key=lambda h: h.created), notes


def damaged_handles(workdir: Path) -> list[DamagedHandle]:
    """The workspace's handle files (indexed or found) that cannot be read, once each."""
    try:
        indexed = [Path(e.handle) for e in list_launches(workdir)]
    except MachineRefused:  # those found in the workspace (the caller says why)
        indexed = []
    return _read_handles(workdir, indexed)[1]


def _read_handles(
    workdir: Path, indexed: list[Path]
) -> tuple[list[LaunchHandle], list[DamagedHandle]]:
    """The handles of ``indexed`` and under ``workdir`` that read, and those damaged,
    each file once (by its real path); an indexed one that is gone is neither."""
    read: dict[str, LaunchHandle] = {}
    damaged: dict[str, DamagedHandle] = {}
    for path in [*(p for p in indexed if p.exists()), *handle_files(workdir)]:
        key = os.path.realpath(path)
        if key in read or key in damaged:
            continue
        try:
            read[key] = read_handle(path)
        except DamagedHandle as exc:
            damaged[key] = exc
        except UsageError:  # gone since it was listed
            continue
    return list(read.values()), list(damaged.values())


def find_launch(name: str, workdir: Path) -> LaunchHandle:
    """The launch ``name`` designates; a one-line UsageError naming the fix otherwise."""
    if not name.strip():  # Path("") is the current directory: `ninja cancel "$UNSET"`
        raise UsageError(
            "the launch's name is empty (an unset shell variable?); give a handle.json, a run"
            " id or a recipe name (`ninja runs` lists this workspace's launches)"
        )
    path = Path(name).expanduser()
    if name.endswith(".json") or os.sep in name or name.startswith("~"):  # a path, said so
        found = _at_path(name, path)
        if found is None:
            raise UsageError(
                f"no launch handle at {name!r}; `ninja runs` lists this workspace's launches"
            )
        return found
    # A bare word is a run id or a recipe of this workspace first: a folder or a file of
    # the same name (notes called `selfcal`, another workspace in `./many`) must not
    # stand in for it, or `ninja cancel many` stops another workspace's launch.
    launches, _ = workspace_launches(workdir)
    named = _in_workspace(name, launches)
    if named is not None:
        try:
            beside = _at_path(name, path)
        except UsageError:  # a file or folder that is no launch's: the word is the recipe's
            beside = None
        if beside is not None and beside.run_id != named.run_id:
            raise UsageError(
                f"{name!r} names both this workspace's launch {named.recipe}/{named.run_id}"
                f" and the launch {beside.recipe}/{beside.run_id} held in ./{name}; give the"
                f" run id, or ./{name} for the latter"
            )
        return named
    beside = _at_path(name, path)
    if beside is not None:
        return beside
    if path.is_dir():
        raise UsageError(
            f"{name!r} holds no launch handle; name a handle.json, a run id or a recipe"
        )
    entries = [e for e in reversed(list_launches()) if e.run_id == name]
    for entry in entries:
        if os.path.exists(entry.handle):
            return read_handle(entry.handle)
    if entries:  # the index knows it, but its handle went (with its workdir?)
        entry = entries[0]
        raise UsageError(
            f"launch {entry.recipe}/{entry.run_id} has no handle any more ({entry.handle} is"
            f" gone: its workdir {entry.workdir} deleted or moved?); its {entry.engine} jobs"
            f" may still run: {stop_hint(entry.engine, entry.run_id)}"
        )
    from shinobi.local_runs import local_runs

    runs = [run for run in local_runs(workdir) if name in (run.run_id, run.recipe)]
    if runs:
        raise LocalRunNamed(
            f"{name!r} names a run made here with `ninja run`, not a launch (a launch is"
            f" what `ninja compile --submit` starts): `ninja logs {shlex.quote(name)}` shows"
            " its logs,"
            " and `ninja runs` lists it",
            runs,
        )
    for damaged in damaged_handles(workdir):  # .shinobi/RECIPE[/RUN_ID]/handle.json
        if name in (damaged.path.parent.name, damaged.path.parent.parent.name):
            raise UsageError(
                f"the launch handle of {name!r}, {damaged.path}, is damaged ({damaged.detail}):"
                " its launch cannot be read, so its jobs cannot be shown or cancelled from it"
                " (the batch system's own commands still can); `ninja clean --launches"
                " --force` removes the handle"
            )
    known = ", ".join(sorted({h.recipe for h in launches})) or "none"
    raise UsageError(
        f"no launch named {name!r} in {workdir} (recipes launched here: {known}); give a"
        " handle.json path, a run id or a recipe name, or --workdir"
    )


def _at_path(name: str, path: Path) -> LaunchHandle | None:
    """The launch of the handle file ``path``, or the one launch held in the folder
    ``path``; None when there is no such file or folder, or it holds no handle."""
    if path.is_file():
        return read_handle(path)
    if not path.is_dir():
        return None
    if (path / HANDLE_NAME).is_file():
        return read_handle(path / HANDLE_NAME)
    inside = handle_files(path)
    if not inside:
        return None
    if len({p.parent.parent for p in inside}) > 1:
        _ambiguous(name, inside)
    return read_handle(inside[-1])


def _in_workspace(name: str, launches: list[LaunchHandle]) -> LaunchHandle | None:
    """The workspace's launch ``name`` is the run id, name or recipe of (the latest),
    or whose run id it starts; None when none."""
    by_run = [h for h in launches if h.run_id == name or h.name == name]
    if by_run:
        return by_run[-1]
    by_recipe = [h for h in launches if h.recipe == name]
    if by_recipe:
        return by_recipe[-1]
    return _by_start_of_run_id(name, launches)


def launch_ids_starting(name: str, workdir: Path) -> list[str]:
    """The run ids of the workspace's launches that ``name`` is the start of."""
    return _ids(_starting(name, workspace_launches(workdir)[0]))


def _starting(name: str, launches: list[LaunchHandle]) -> list[LaunchHandle]:
    return [h for h in launches if h.run_id.startswith(name)]


def _ids(launches: list[LaunchHandle]) -> list[str]:
    return sorted({h.run_id for h in launches})


def _by_start_of_run_id(name: str, launches: list[LaunchHandle]) -> LaunchHandle | None:
    """The launch whose run id ``name`` starts, as a local run is named by the start
    of its id; None when none does. Raises when it starts several."""
    started = _starting(name, launches)
    ids = _ids(started)
    if len(ids) > 1:
        shown = listed(ids, 5)
        raise UsageError(
            f"{name!r} starts the run ids of {len(ids)} launches ({shown}); give more of it"
        )
    return started[-1] if started else None


def stop_hint(engine: str, run_id: str) -> str:
    """How to stop a launch's jobs without its handle, where shinobi knows the engine."""
    if engine == "slurm":  # every job of a launch is named after its run (shinobi_slurm)
        return f"`scancel --name shinobi-{run_id}` stops them"
    return f"stop them with {engine}'s own tools"


def _ambiguous(name: str, paths: list[Path]) -> LaunchHandle:
    """Refuse a folder of several recipes' launches, naming the recipes as
    :func:`find_launch` takes them (shell-quoted), not by their folders, whose
    names are made file-safe (``cal ms`` lives in ``cal_ms-<hash>``)."""
    recipes = ", ".join(sorted({shlex.quote(_recipe_of(p)) for p in paths}))
    raise UsageError(
        f"{name!r} holds launches of several recipes ({recipes}); name one of them or its handle"
    )


def _recipe_of(path: Path) -> str:
    """The recipe a handle file records; its folder's name if it cannot be read."""
    try:
        return read_handle(path).recipe
    except UsageError:
        return path.parent.parent.name


def all_launches() -> tuple[list[LaunchHandle], list[str]]:
    """Every recorded launch whose handle still exists, oldest first, and notes on the rest."""
    handles: list[LaunchHandle] = []
    notes: list[str] = []
    for entry in list_launches():
        if not os.path.exists(entry.handle):
            notes.append(
                f"launch {entry.recipe}/{entry.run_id}: its handle {entry.handle} is gone;"
                f" `ninja clean --launches --workdir {shlex.quote(entry.workdir)}` forgets it"
            )
            continue
        try:
            handles.append(read_handle(entry.handle))
        except UsageError as exc:
            notes.append(str(exc))
    return handles, notes
