"""The run manifest: what ran, where, with what, and how it ended, as one JSON file.

``<workdir>/.shinobi/runs/<run-id>/manifest.json`` is written when the run
starts and rewritten as steps start and finish, so a run that is interrupted,
or a ninja that crashes or is killed outright, still leaves a manifest that
parses and says how far it got. Every write goes to a temporary file that is
fsynced and renamed over the old one. Rewrites are throttled to one every
:data:`FLUSH_INTERVAL` seconds by a background thread (plus one at the end),
and spaced out further as the manifest grows, so a run of thousands of short
steps costs a bounded number of writes rather than one per step.

Only environment variables named in ``provenance.env_allow`` are recorded:
an environment routinely holds tokens and passwords, and a manifest is
meant to be shared.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import platform
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shinobi.file_digests import write_atomically
from shinobi.host_name import this_host
from shinobi.json_values import json_data
from shinobi.session import safe_name
from shinobi.step_names import in_slice_of, scattered_step, unsliced
from shinobi.steps.result import shown_outputs
from shinobi.wording import listed

if TYPE_CHECKING:
    from importlib.metadata import Distribution

    from shinobi.graph import Graph, Node
    from shinobi.session import Session
    from shinobi.steps.result import RecipeResult, StepResult

__all__ = [
    "FLUSH_INTERVAL",
    "MANIFEST_FORMAT",
    "ManifestRecorder",
    "allowed_environment",
    "installed_versions",
    "load_manifest",
    "render_manifest",
    "resolve_manifest",
]

MANIFEST_FORMAT = 1
#: Seconds between rewrites of the manifest while a run goes on.
FLUSH_INTERVAL = 0.5
_MAX_WARNINGS = 1000


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, tz=UTC).isoformat(timespec="milliseconds")


def _plain(value: Any) -> Any:
    """``value`` as JSON data (:func:`shinobi.json_values.json_data`): a model
    input as its JSON dump and a set as a sorted list, so the manifest's inputs
    can be fed back to the recipe, as ``--json`` writes them."""
    return json_data(value)


def _without_secrets(argv: Sequence[str], inputs: Mapping[str, Any]) -> list[str]:
    """The command line with the value of every secret input (pydantic's
    ``SecretStr``/``SecretBytes``, which the inputs show as ``**********``)
    masked too: a password given as ``--pw s3cret`` must not sit in a file
    the run leaves for others to read. A secret inside a list, a mapping or a
    model (``--creds '{"password": "s3cret"}'``) is one too, written as given
    or as JSON escapes it."""
    from shinobi.steps.argv import masked, secret_texts, secrets_within

    texts = secret_texts(secrets_within(list(inputs.values())))
    spelled = {spelling for text in texts for spelling in _spellings(text)}
    shown: list[str] = masked(list(argv), sorted(spelled, key=len, reverse=True))
    return [_json_masked(word, texts) for word in shown] if texts else shown


def _json_masked(word: str, secrets: Sequence[str]) -> str:
    """``word`` with a JSON value holding a secret masked whole, whatever escapes spell
    the secret there (``\\/`` for ``/``, PHP's default; ``\\u002B`` for ``+``, .NET's):
    only the three spellings :func:`_spellings` knows were masked, and base64 tokens
    hold ``/`` and ``+``. A word without a backslash has no other spelling."""
    if "\\" not in word:
        return word
    starts = [i for i in (word.find("{"), word.find("[")) if i >= 0]
    if not starts:
        return word
    try:
        value = json.loads(word[min(starts) :])
    except ValueError:
        return word
    if any(secret in text for text in _texts_in(value) for secret in secrets):
        return word[: min(starts)] + "**********"
    return word


def _texts_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value: its texts, and its mappings' keys."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _texts_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts_in(item)


def _spellings(secret: str) -> list[str]:
    """A secret's text, and as a JSON string's body holds it (a quote, a
    backslash or non-ASCII text is written otherwise there)."""
    return [secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1]]


def render_manifest(document: Mapping[str, Any]) -> bytes:
    """The manifest as JSON text: a line per field, per step and per graph node.

    Greppable and diffable, one step to a line, and fast: each line is encoded
    by the compact (C) encoder, where indenting the whole document falls back
    to Python's pure-Python one, several times slower on a 1,000-step run.
    """

    def compact(value: Any) -> str:
        return json.dumps(value, default=str)

    def block(value: Any, depth: int) -> str:
        pad = " " * depth
        if depth < 3 and isinstance(value, dict) and value:
            fields = [f"{pad} {compact(str(k))}: {block(v, depth + 1)}" for k, v in value.items()]
            return "{\n" + ",\n".join(fields) + f"\n{pad}}}"
        if depth < 3 and isinstance(value, list) and value:
            return "[\n" + ",\n".join(f"{pad} {compact(v)}" for v in value) + f"\n{pad}]"
        return compact(value)

    return (block(dict(document), 0) + "\n").encode()


#: Names of variables that hold secrets by their looks: a pattern that matches one
#: records it masked; only a variable named in full is recorded as it is.
_SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|PRIVATE|AUTH|(?:^|_)(?:API_?)?KEY(?:$|_)",
    re.IGNORECASE,
)

#: What a masked variable's value is recorded as.
MASKED = "***"


def allowed_environment(
    allow: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The variables of ``environ`` named in ``allow`` (shell-style patterns allowed).

    A pattern is a convenience (``SLURM_*``), and it sweeps up whatever shares
    the prefix (``AWS_*`` holds ``AWS_SECRET_ACCESS_KEY``): a variable it
    matches whose name says it holds a secret is recorded masked. Named in
    full, a variable is recorded as it is: that is a choice."""
    env = os.environ if environ is None else environ
    chosen: dict[str, str] = {}
    named = set()
    for pattern in allow:
        if any(c in pattern for c in "*?["):
            chosen.update({k: v for k, v in env.items() if fnmatch.fnmatchcase(k, pattern)})
        elif pattern in env:
            named.add(pattern)
    chosen = {
        k: MASKED if _SECRET_NAME.search(k) else v for k, v in chosen.items() if k not in named
    }
    chosen.update((k, env[k]) for k in named)
    return dict(sorted(chosen.items()))


def _may_be_named_shinobi(dist: Distribution) -> bool:
    """False only when ``dist``'s name cannot start with "shinobi".

    Parsing a distribution's metadata (an email-style header block followed
    by its whole long description) is what made listing versions slow; the
    raw text is cheap to read, and a name starting with "shinobi" is in it.
    """
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO")
    return text is None or "shinobi" in text


def installed_versions() -> dict[str, str]:
    """shinobi-core and every installed distribution that plugs into it, with versions."""
    from importlib.metadata import distributions

    found: dict[str, str] = {}
    for dist in distributions():
        groups = {ep.group for ep in dist.entry_points}
        plugs_in = any(g.startswith("shinobi.") for g in groups)
        if not plugs_in and not _may_be_named_shinobi(dist):
            continue
        metadata = dist.metadata  # parsed once for the name and the version
        name = metadata["Name"] or ""
        if name.startswith("shinobi") or plugs_in:
            found[name] = metadata["Version"]
    if "shinobi-core" not in found:
        from shinobi import __version__

        found["shinobi-core"] = __version__
    return dict(sorted(found.items()))


def _cache_setting(session: Session) -> dict[str, bool]:
    """Whether the run used the step cache, and whether it only stored
    (``ninja run --no-cache``: every step ran, its result replaced the entry)."""
    enabled = session.use_cache and session.cache is not None
    return {"enabled": enabled, "refreshed": enabled and session.refresh_cache}


def _host() -> dict[str, Any]:
    try:
        import getpass

        user = getpass.getuser()
    except Exception:
        user = None
    return {
        "hostname": this_host(),
        "platform": _platform(),
        "machine": os.uname().machine,
        "cpus": os.cpu_count(),
        "user": user,
        "pid": os.getpid(),
    }


def _platform() -> str:
    """``Linux-6.1.0-13-amd64-x86_64-with-glibc2.36``, as ``platform.platform()`` says
    it, without the ``uname -p`` process that one starts (a cached re-run with
    provenance on started a process of ninja's own, where none of a step ran)."""
    name = os.uname()
    libc, version = platform.libc_ver()  # read from the interpreter's file, no process
    said = f"{name.sysname}-{name.release}-{name.machine}"
    return f"{said}-with-{libc}{version}" if libc else said


def _python() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def _node_info(name: str, node: Node, deps: list[str]) -> dict[str, Any]:
    from shinobi.plan import cab_of

    cab = cab_of(node.step)
    image = getattr(cab, "image", None) or getattr(node.step, "image", None)
    resources = node.resources
    return {
        "name": name,
        "kind": node.kind,
        "tool": getattr(cab, "name", None),
        # the cab's own word on which tool this is: ``version=`` and the command it runs
        "tool_version": getattr(cab, "version", None),
        "command": list(getattr(cab, "command", None) or []) or None,
        "deps": deps,
        "image": image,
        "backend": node.backend,
        "scatter": list(node.scatter),
        "resources": (
            {**resources.to_json(), "text": resources.describe()}
            if resources is not None and resources.declared
            else None
        ),
        "loop": node.loop,
        "iteration": node.iteration,
    }


def _graph_nodes(graph: Graph, prefix: str = "") -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    for node in graph.nodes:
        name = f"{prefix}{node.name}"
        deps = [f"{prefix}{graph.nodes[d].name}" for d in node.deps]
        nodes.append(_node_info(name, node, deps))
        if node.subgraph is not None:
            inner = _graph_nodes(node.subgraph, f"{name}.")
            for child in inner:
                if not child["deps"] and child["name"].count(".") == name.count(".") + 1:
                    child["deps"] = list(deps)
            nodes.extend(inner)
    return nodes


def _repeated_steps(graph: Graph) -> tuple[set[str], dict[str, list[str]]]:
    """The graph nodes a scatter repeats, and what each scattered nested recipe repeats.

    A step inside a scattered nested recipe runs as ``sub[0].first``,
    ``sub[1].first``, ...; its node's own name (``sub.first``) is a template no
    step ever has, so it is never listed as a step. Returned: those template
    names, and for each scattered nested recipe (by its node's name) the names
    of its steps relative to it (``first``, ``L.1``, ``inner.a``), down to and
    including a scattered recipe inside it, whose steps are its own.
    """
    repeated: set[str] = set()
    scattered: dict[str, list[str]] = {}

    def walk(inner: Graph, prefix: str, into: list[str] | None, relative: str) -> None:
        for node in inner.nodes:
            name = f"{prefix}{node.name}"
            if into is not None:
                repeated.add(name)
                into.append(f"{relative}{node.name}")
            if node.subgraph is None:
                continue
            if node.scatter:
                walk(node.subgraph, f"{name}.", scattered.setdefault(name, []), "")
            else:
                walk(node.subgraph, f"{name}.", into, f"{relative}{node.name}.")

    walk(graph, "", None, "")
    return repeated, scattered


def _program_file(name: str, cwd: str) -> str | None:
    """The file the program ``name`` is (a path against ``cwd``, else looked up on
    PATH), links resolved, or None when there is none."""
    found = os.path.join(cwd, name) if os.sep in name else shutil.which(name)
    if found is None or not os.path.isfile(found):
        return None
    return os.path.realpath(found)


class ManifestRecorder:
    """A :class:`~shinobi.session.RunObserver` that keeps the run manifest up to date."""

    def __init__(
        self, path: Path, document: dict[str, Any], nodes: dict[str, dict[str, Any]]
    ) -> None:
        self.path = path
        self.document = document
        self.nodes = nodes
        self.order = {name: i for i, name in enumerate(nodes)}
        self.steps: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.dirty = False
        self.planned_slices: dict[str, int] = {}
        #: The nodes a scatter repeats, and each scattered nested recipe's steps
        #: (see :func:`_repeated_steps`).
        self.repeated: set[str] = set()
        self.scattered: dict[str, list[str]] = {}
        self.cwd = os.getcwd()  # where the steps run: the session's, once started
        self.programs: dict[str, str | None] = {}
        #: venv -> its Python version, looked up once per run (see _venv_python)
        self.venv_pythons: dict[str, str | None] = {}
        #: The run's step cache, which hashed each step's inputs for its key.
        self.cache: Any = None
        self.stop = threading.Event()
        #: Set by a step's start: the flusher writes at once rather than at its next tick.
        self.wake = threading.Event()
        self.logs_dir = path.parent / "logs"
        self.thread = threading.Thread(target=self._flusher, daemon=True, name="shinobi-manifest")

    @classmethod
    def start(cls, session: Session, graph: Graph, inputs: Mapping[str, Any]) -> ManifestRecorder:
        """Write the manifest of a run that is about to start, and follow it."""
        assert session.run_dir is not None, "the session has no run directory"
        config = session.config
        nodes = {n["name"]: n for n in _graph_nodes(graph)}
        now = time.time()
        recipe = graph.recipe
        document: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "run_id": session.run_id,
            "status": "running",
            "started": now,
            "started_at": _iso(now),
            "finished": None,
            "finished_at": None,
            "recipe": {
                "name": recipe.name,
                "description": getattr(recipe, "description", None),
                "max_workers": graph.recipe.max_workers or config.execution.max_workers,
            },
            "inputs": _plain(dict(inputs)),
            "outputs": None,
            "error": None,
            "failed_step": None,
            "signal": None,
            "undying": [],
            "command": _without_secrets(sys.argv, inputs),
            "cwd": session.cwd,
            "run_dir": str(session.run_dir),
            "backend": session.default_backend,
            "host": _host(),
            "python": _python(),
            "versions": installed_versions(),
            "environment": allowed_environment(config.provenance.env_allow),
            "config": {
                "execution": _plain(config.execution.model_dump()),
                "cache": _cache_setting(session),
            },
            "graph": {"nodes": list(nodes.values())},
            "steps": [],
            "warnings": [],
        }
        recorder = cls(session.run_dir / "manifest.json", document, nodes)
        recorder.repeated, recorder.scattered = _repeated_steps(graph)
        recorder.planned_slices = session.planned_slices  # filled in as the run goes
        recorder.cwd = session.cwd
        recorder.cache = session.cache
        if session.cache is not None:  # it keeps what each key read only when asked
            session.cache.read_inputs = {}
        for name in nodes:  # every step is listed from the start: pending until it runs
            if name not in recorder.repeated:  # a scatter's slices are listed as planned
                recorder._record(name)
        recorder.write()
        recorder.thread.start()
        return recorder

    # -- observer --------------------------------------------------------------
    def _record(self, name: str) -> dict[str, Any]:
        record = self.steps.get(name)
        if record is None:
            node = unsliced(name)  # a step of a scattered recipe's slice: its node's
            base = self.nodes.get(node, {})
            record = {
                "name": name,
                "node": base.get("name", node),
                "slice_of": owner if (owner := scattered_step(name)) != name else None,
                "kind": base.get("kind"),
                "tool": base.get("tool"),
                "deps": [in_slice_of(name, dep) for dep in base.get("deps", [])],
                "image": base.get("image"),
                "image_digest": None,
                "program": None,
                "venv": None,
                "venv_python": None,
                "input_digests": None,
                "resources": base.get("resources"),
                "status": "pending",
                "skipped": False,
                "cached": False,
                "backend": None,
                "argv": None,
                "started": None,
                "finished": None,
                "started_at": None,
                "finished_at": None,
                "duration": None,
                "returncode": None,
                "signal": None,
                "signal_name": None,
                "error": None,
                "warnings": [],
                "outputs": None,
                "logs": {},
                "details": {},
            }
            self.steps[name] = record
        return record

    def step_started(self, name: str, info: dict[str, Any]) -> None:
        now = time.time()
        with self.lock:
            record = self._record(name)
            record.update(
                status="running",
                backend=info.get("backend"),
                argv=_plain(info.get("argv")),
                program=self._program(info.get("backend"), info.get("argv")),
                venv=info.get("venv"),
                venv_python=self._venv_python(info.get("venv")),
                started=now,
                started_at=_iso(now),
            )
            self.dirty = True
        self.wake.set()

    def _program(self, backend: Any, argv: Any) -> str | None:
        """The file a native step's program is, links resolved (``wsclean`` on PATH
        -> ``/opt/wsclean-3.4/bin/wsclean``), or None when it cannot be told here.

        The step cache knows an installed program by its name; the manifest must
        say which installation ran. Another backend's program lives where it runs
        (an image, a venv, a node), and is not looked up on this host's PATH.
        Looked up once per program and run: a scatter starts thousands of slices.
        """
        if backend != "native" or not isinstance(argv, list) or not argv:
            return None
        name = argv[0]
        if not isinstance(name, str) or not name:
            return None
        if name not in self.programs:
            self.programs[name] = _program_file(name, self.cwd)
        return self.programs[name]

    def _venv_python(self, venv: Any) -> str | None:
        """The Python version of the venv a step ran in (``3.11.7``), as its
        ``pyvenv.cfg`` says; None when it has none. Read once per venv and run."""
        if not isinstance(venv, str):
            return None
        if venv not in self.venv_pythons:
            from shinobi.backends.venv import venv_python_version

            version = venv_python_version(venv, ask=False)  # a file's word: no process
            self.venv_pythons[venv] = ".".join(map(str, version)) if version else None
        return self.venv_pythons[venv]

    def _input_digests(self, name: str) -> list[dict[str, str]] | None:
        """The content digest of every input the step ``name`` read, as its cache key
        took them; None when the step was not keyed (no cache, or not cacheable)."""
        read = getattr(self.cache, "read_inputs", None)
        taken = read.pop(name, None) if isinstance(read, dict) else None
        if taken is None:
            return None
        return [{"field": f, "path": p, "digest": d} for f, p, d in taken]

    def step_finished(self, result: StepResult) -> None:
        details = {k: v for k, v in result.details.items() if k not in ("steps",)}
        inputs = self._input_digests(result.name)
        with self.lock:
            record = self._record(result.name)
            started = result.started if result.started is not None else record["started"]
            record.update(
                status=result.status,
                skipped=result.status == "skipped",
                cached=result.status == "cached",
                backend=result.backend or record["backend"],
                argv=_plain(result.argv) if result.argv is not None else record["argv"],
                started=started,
                finished=result.finished,
                started_at=_iso(started),
                finished_at=_iso(result.finished),
                duration=(
                    result.finished - started
                    if result.finished is not None and started is not None
                    else None
                ),
                returncode=result.returncode,
                signal=result.signal,
                signal_name=_signal_name(result.signal),
                error=result.error,
                warnings=list(result.warnings),
                outputs=_plain(shown_outputs(result.outputs, (result,))),
                image_digest=result.details.get("image_digest"),
                input_digests=inputs,
                details=_plain(details),
                logs=self._logs(result.name),
            )
            self.dirty = True

    def warning(self, message: str) -> None:
        with self.lock:
            warnings = self.document["warnings"]
            if len(warnings) < _MAX_WARNINGS:
                warnings.append(message)
                self.dirty = True

    def _logs(self, name: str) -> dict[str, str]:
        """The step's log files, relative to the run directory: a silent stream has none."""
        logs: dict[str, str] = {}
        base = safe_name(name)
        for stream, suffix in (("stdout", ".out"), ("stderr", ".err")):
            if os.path.exists(f"{self.logs_dir}{os.sep}{base}{suffix}"):
                logs[stream] = f"logs/{base}{suffix}"
        return logs

    # -- writing -----------------------------------------------------------------
    def _snapshot(self) -> dict[str, Any]:
        """A copy of the document that later step events cannot change (lock held).

        Records are updated by replacing their values, never in place, so a
        shallow copy of each is enough; serialising happens outside the lock,
        where it does not hold up the steps reporting meanwhile.
        """
        last = len(self.order)
        steps = sorted(
            self.steps.values(),
            key=lambda r: (self.order.get(r["node"], last), _slice_number(r), r["name"]),
        )
        document = dict(self.document)
        document["steps"] = [dict(record) for record in steps]
        document["warnings"] = list(self.document["warnings"])
        self.dirty = False
        return document

    def write(self) -> None:
        with self.lock:
            document = self._snapshot()
        write_atomically(self.path, render_manifest(document), fsync=True)

    def _flusher(self) -> None:
        """Rewrite the manifest while the run goes on, taking at most a tenth of the time.

        A manifest of 100,000 steps takes seconds to serialise: rewriting it
        every :data:`FLUSH_INTERVAL` would keep a core busy, so the pause after
        a write is at least nine times what the write took. A step's start is
        written at once when no pause is running: a ninja killed (SIGKILL, the
        OOM killer) in its first second left a manifest saying no step had
        started, while the step's tool and its logs were there.
        """
        while True:
            self.wake.wait(FLUSH_INTERVAL)
            self.wake.clear()
            if self.stop.is_set():
                return
            if self.dirty:
                started = time.monotonic()
                # A full disk must not kill the run; the final write reports it.
                with contextlib.suppress(OSError):
                    self.write()
                pause = max(FLUSH_INTERVAL, 9 * (time.monotonic() - started))
                if self.stop.wait(pause):
                    return

    def _finish(self, status: str, **fields: Any) -> None:
        self.stop.set()
        self.wake.set()
        self.thread.join()
        now = time.time()
        with self.lock:
            self.document.update(status=status, finished=now, finished_at=_iso(now), **fields)
            self._mark_not_run()
        self.write()

    def _mark_not_run(self) -> None:
        """Every step the run ended without starting, recorded as such (lock held).

        A run that stops at a failure or a signal never reaches the steps
        after it; the manifest lists them anyway, so it describes the whole
        recipe and says which steps did not run, not only those that did.
        """
        reached = {record["node"] for record in self.steps.values()}
        for name in self.nodes:
            if name not in reached and name not in self.repeated:
                self._record(name)
        for name, count in self.planned_slices.items():  # slices that never started
            for index in range(count):
                self._record(f"{name}[{index}]")
        for name in self.scattered.keys() - self.repeated:  # and their steps
            self._slice_steps(name, name)
        for name, record in self.steps.items():
            if record["status"] == "pending":
                self.steps[name] = {**record, "status": "not run"}

    def _slice_steps(self, node: str, step: str) -> None:
        """Every step of each planned slice of the scattered nested recipe ``step``
        (graph node ``node``), listed (lock held): those a failure or a signal kept
        from starting stay pending, to be marked not run. A scattered recipe
        inside it is followed into the slices it planned in its turn."""
        for index in range(self.planned_slices.get(step, 0)):
            for relative in self.scattered[node]:
                inner = f"{step}[{index}].{relative}"
                self._record(inner)
                if f"{node}.{relative}" in self.scattered:
                    self._slice_steps(f"{node}.{relative}", inner)

    def close(self, result: RecipeResult, session: Session | None = None) -> None:
        """The run ended (successfully, with a failure, or interrupted)."""
        status: str = result.status
        fields: dict[str, Any] = {
            "outputs": _plain(shown_outputs(result.outputs, result.steps)),
            "error": result.error,
            "failed_step": result.failed_step,
        }
        if session is not None and session.interrupted is not None:
            from shinobi.teardown import interrupted_fields

            said = interrupted_fields(session.interrupted, session.undying, result)
            status = said.pop("status")
            fields.update(said, undying=list(session.undying))
        self._finish(status, **fields)

    def abort(self, exc: BaseException) -> None:
        """The run ended with an exception instead of a result (a bug, or Ctrl-C early)."""
        self._finish("crashed", error=f"{type(exc).__name__}: {exc}")


def _signal_name(number: int | None) -> str | None:
    if number is None:
        return None
    try:
        return signal.Signals(number).name
    except ValueError:
        return None


def _slice_number(record: Mapping[str, Any]) -> int:
    """Where a record goes among its step's: the step first (-1), then its slices in
    number order (``s[2]`` before ``s[10]``, which text order reverses)."""
    if record["slice_of"] is None:
        return -1
    index = str(record["name"]).rpartition("[")[2].rstrip("]")
    return int(index) if index.isdigit() else 0


def resolve_manifest(target: str, workdir: Path | None = None) -> Path:
    """A manifest path from a run id (under ``<workdir>/.shinobi/runs``), a run dir or a path.

    Raises FileNotFoundError with a message naming what was tried.
    """
    if not target.strip():  # Path("") is the current directory; every id starts with ""
        raise FileNotFoundError(
            "the run's name is empty (an unset shell variable?); give a run id, a run folder"
            " or a manifest.json (`ninja runs` lists them)"
        )
    candidate = Path(target)
    if candidate.is_file():
        return candidate
    if candidate.is_dir() and (candidate / "manifest.json").is_file():
        return candidate / "manifest.json"
    from shinobi.local_runs import runs_root

    runs = runs_root(workdir or Path.cwd())
    by_id = runs / target / "manifest.json"
    if by_id.is_file():
        return by_id
    matches = (
        sorted(p for p in runs.iterdir() if p.name.startswith(target)) if runs.is_dir() else []
    )
    if matches:
        with_manifest = [p / "manifest.json" for p in matches if (p / "manifest.json").is_file()]
        if len(with_manifest) == 1:
            return with_manifest[0]
        if len(with_manifest) > 1:
            names = listed(with_manifest, 5, lambda p: p.parent.name)
            raise FileNotFoundError(
                f"{target!r} matches {len(with_manifest)} runs ({names}); give more of the run id"
            )
    folders = [p for p in matches if p.is_dir()]
    run_dir = candidate if candidate.is_dir() else runs / target
    if not run_dir.is_dir() and len(folders) == 1:
        run_dir = folders[0]
    if run_dir.is_dir() and not _looks_like_a_run(run_dir):
        raise FileNotFoundError(
            f"{target!r} is not a run folder (it holds no run's records): give a run id"
            " (`ninja runs` lists this workspace's runs), a run folder or a manifest.json path"
        )
    if run_dir.is_dir():  # a run, made without provenance
        raise FileNotFoundError(
            f"run {run_dir.name!r} was made without provenance, so it has no manifest to"
            " report: run the recipe again with `ninja run --provenance` (or set"
            " provenance.enabled in shinobi.toml); `ninja logs` shows its logs"
        )
    from shinobi.local_runs import is_run_name

    if is_run_name(target):  # a run id, of no run here: another project's, most likely
        raise FileNotFoundError(
            f"no run {target!r} in {runs} (`ninja runs` lists them): run `ninja report` from"
            " the directory the run was made in, or give --workdir, the run folder or its"
            " manifest.json"
        )
    raise FileNotFoundError(
        f"no run manifest for {target!r}: give a run id from {runs} (runs with provenance"
        " enabled have one: `ninja run --provenance`), a run directory or a manifest.json path"
    )


def _looks_like_a_run(folder: Path) -> bool:
    """Whether ``folder`` is a run's: every run keeps its lock record and its logs folder."""
    from shinobi.local_runs import RUN_RECORD

    return (folder / RUN_RECORD).exists() or (folder / "logs").is_dir()


def load_manifest(path: Path) -> dict[str, Any]:
    """A manifest's data; ValueError naming the file when it is not one."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable run manifest ({exc})") from None
    if not isinstance(data, dict) or "format" not in data:
        raise ValueError(f"{path}: not a shinobi run manifest (it has no format field)")
    if data["format"] != MANIFEST_FORMAT:
        raise ValueError(
            f"{path}: a run manifest of format {data['format']!r}, where this ninja reads"
            f" format {MANIFEST_FORMAT} (written by another version of shinobi?)"
        )
    steps = data.get("steps", [])
    if not isinstance(steps, list) or not all(isinstance(step, dict) for step in steps):
        raise ValueError(f"{path}: a damaged run manifest (its steps are not a list of records)")
    return data
