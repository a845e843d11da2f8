"""A run manifest as one self-contained HTML page: summary, timeline, graph, steps.

Everything is inline (CSS and SVG, no script, no fonts or images fetched), so
the file can be mailed, attached to a ticket or opened on an offline cluster
login node. Log files are linked, not embedded: they can be gigabytes, and the
links are relative so the report keeps working when the run folder is copied
as a whole.
"""

from __future__ import annotations

import hashlib
import html
import math
import posixpath
import re
import shlex
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from shinobi.render.shell_words import logs_command

__all__ = ["GENERATOR", "OnDisk", "RunOrigin", "render_report"]

#: What marks a page as a report ninja wrote: `ninja report -o` writes over
#: such a page, and over nothing else a user keeps.
GENERATOR = '<meta name="generator" content="shinobi report">'

#: Step logs by step name, then stream (``stdout``, ``stderr``): paths inside a run folder.
StepLogs = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True, slots=True)
class RunOrigin:
    """The folder of a run whose step cache served some of this run's steps."""

    href: str  # from the page to that run's folder
    logs: StepLogs = field(default_factory=dict)  # what those steps printed when it ran them


@dataclass(frozen=True, slots=True)
class OnDisk:
    """What a run's folder says beyond its manifest, read by ``ninja report``.

    A manifest records a step's logs when the step ends and the run's end when
    the run ends, so the manifest of a run whose ninja was killed shows neither;
    the folder still tells both (its lock, as ``ninja runs`` reads it, and the
    log files), and the page must not contradict ``ninja runs`` or ``ninja logs``.
    """

    state: str | None = None  # as ``ninja runs`` says it; None: the manifest's word
    last_activity: float | None = None  # when the folder last changed
    logs: StepLogs = field(default_factory=dict)  # the log files found in it
    origins: Mapping[str, RunOrigin] = field(default_factory=dict)  # by run id


_COLOURS = {
    "ok": "#3a9d5d",
    "cached": "#6c8ebf",
    "skipped": "#b0b0b0",
    "failed": "#d64541",
    "cancelled": "#e08e0b",
    "running": "#e0c30b",
    "pending": "#dddddd",
    "not run": "#f0f0f0",
}

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:1.5em;
color:#222;max-width:1400px}
h1{font-size:1.4em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.6em;
border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.9em}td,th{padding:.2em .6em;text-align:left;
vertical-align:top}
th{background:#f3f3f3}tr:nth-child(even) td{background:#fafafa}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;white-space:pre-wrap;margin:.3em 0}
.badge{display:inline-block;padding:.05em .5em;border-radius:.6em;color:#fff;font-size:.85em}
.svgbox{overflow-x:auto;border:1px solid #eee}
details{margin:.3em 0;border-left:4px solid #ddd;padding-left:.6em}
summary{cursor:pointer}
.muted{color:#777}
"""


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escaped_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    # 0xDC80-0xDCFF is how Python decodes a byte that is not UTF-8 (a file name's)
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _visible(text: str) -> str:
    """``text`` with the bytes that are not UTF-8 in a file name or argv shown as ``\\xff``.

    The manifest keeps such names as lone surrogates, which no UTF-8 page can
    hold; escaped, the reader still sees which name it was.
    """
    return _SURROGATE.sub(_escaped_surrogate, text)


def _e(value: Any) -> str:
    return html.escape(_visible("" if value is None else str(value)), quote=True)


def _as_json(value: Any) -> str:
    """An input as the manifest holds it, as JSON text (a model as an object, a set
    as a list): what ``--name`` takes back. A string is shown as itself."""
    import json

    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _href(base: str, path: str) -> str:
    """A link to ``path`` (inside the folder ``base`` leads to), for an ``href`` attribute.

    URL-encoded, so a ``#``, ``?``, ``%`` or space in a folder name stays part of
    the path; a byte that is not UTF-8 becomes its ``%XX``, the file's real name.
    Brackets stay (browsers take them as they are in a path): a scattered
    step's ``logs/step[0].out`` still reads as its name.
    """
    joined = posixpath.join(base, path) if base else path
    return html.escape(quote(joined, safe="/[]", errors="surrogateescape"), quote=True)


def _badge(status: str) -> str:
    colour = _COLOURS.get(status, "#888")
    return f'<span class="badge" style="background:{colour}">{_e(status)}</span>'


def _stamp(value: Any) -> float | None:
    """``value`` as a Unix time the page can show, or None.

    A damaged or hand-edited manifest may hold anything there (``1e400`` reads
    as infinity, ``1e300`` is past any calendar): the page says the time is
    unknown rather than failing.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value):
        return None
    try:
        time.localtime(value)
    except (OverflowError, OSError, ValueError):
        return None
    return float(value)


def _when(value: Any) -> str:
    if value is None:
        return "—"
    stamp = _stamp(value)
    if stamp is None:
        return "unknown"
    return (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(stamp)) + f".{int(stamp % 1 * 1000):03d}"
    )


def _duration(seconds: Any) -> str:
    if seconds is None:
        return "—"
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return "unknown"
    if not math.isfinite(seconds):
        return "unknown"
    if seconds < 60:
        return f"{seconds:.2f}s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{int(minutes)}m{secs:02.0f}s"
    hours, minutes = divmod(minutes, 60)
    return f"{int(hours)}h{int(minutes):02d}m"


def _anchor(name: str) -> str:
    """The ``id`` of a step's section: readable, and its own.

    Characters an id does not hold well become ``_``; a name that changed so
    gets a hash of the whole name, or ``cal ms`` and ``cal:ms`` (two steps,
    with logs of their own) would share one id and every link to the second
    would open the first. A scatter slice's brackets (``image[3]``, read as
    ``step-image_3_``) are the one change that keeps the id as it is.
    """
    plain = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    if plain == name or plain == re.sub(r"[\[\]]", "_", name):
        return f"step-{plain}"
    tag = hashlib.sha256(name.encode(errors="surrogateescape")).hexdigest()[:8]
    return f"step-{plain}-{tag}"


def _resources(step: Mapping[str, Any]) -> str:
    return _declared(step) or "undeclared"


def _declared(step: Mapping[str, Any]) -> str:
    """The step's declared resources as text; "" when it declared none (the timeline
    then shows nothing beside its bar rather than the same word on every row)."""
    declared = step.get("resources")
    return str(declared.get("text")) if isinstance(declared, Mapping) else ""


def _ending(manifest: Mapping[str, Any], state: str, disk: OnDisk) -> list[tuple[str, str]]:
    """The rows that say when the run ended, or that it never said so."""
    started, finished = _stamp(manifest.get("started")), _stamp(manifest.get("finished"))
    if manifest.get("status") == "running" and state != "running":  # its last word is stale
        rows = [("finished", "never recorded: its ninja ended without writing it")]
        if disk.last_activity is not None:
            rows.append(("last activity", _e(_when(disk.last_activity))))
        return rows
    duration = finished - started if finished is not None and started is not None else None
    return [
        ("finished", _e(_when(manifest.get("finished")))),
        ("duration", _e(_duration(duration))),
    ]


def _summary(manifest: Mapping[str, Any], state: str, disk: OnDisk) -> str:
    recipe = manifest.get("recipe") or {}
    rows = [
        ("status", _badge(state)),
        ("run", _e(manifest.get("run_id"))),
        ("started", _e(_when(manifest.get("started")))),
        *_ending(manifest, state, disk),
        ("host", _e((manifest.get("host") or {}).get("hostname"))),
        ("backend", _e(manifest.get("backend"))),
        ("working directory", f"<code>{_e(manifest.get('cwd'))}</code>"),
    ]
    if manifest.get("signal"):
        rows.append(("stopped by", _e(manifest["signal"])))
    if manifest.get("undying"):
        rows.append(("would not die", _e(", ".join(str(p) for p in manifest["undying"]))))
    if manifest.get("error"):
        where = f" (step {_e(manifest.get('failed_step'))})" if manifest.get("failed_step") else ""
        rows.append(("error", f"{_e(manifest['error'])}{where}"))
    versions = manifest.get("versions") or {}
    python = manifest.get("python") or {}
    rows.append(
        (
            "versions",
            _e(", ".join(f"{k} {v}" for k, v in versions.items()))
            + _e(f"; Python {python.get('version', '?')}"),
        )
    )
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    inputs = manifest.get("inputs") or {}
    input_rows = "".join(
        f"<tr><th>{_e(k)}</th><td><code>{_e(_as_json(v))}</code></td></tr>"
        for k, v in inputs.items()
    )
    title = _e(recipe.get("name"))
    return f"<h1>Recipe {title}</h1><table>{body}</table>" + (
        f"<h2>Inputs</h2><table>{input_rows}</table>" if input_rows else ""
    )


def _timeline(steps: Sequence[Mapping[str, Any]], end_of_run: float | None) -> str:
    timed = [s for s in steps if _stamp(s.get("started")) is not None]
    if not timed:
        return '<p class="muted">No step started.</p>'
    starts = [float(s["started"]) for s in timed]
    origin = min(starts)
    ends = [f for f in (_stamp(s.get("finished")) for s in timed) if f is not None]
    last = max([*ends, end_of_run or origin, *starts])
    span = max(last - origin, 1e-3)
    label_w, bar_w, row_h, res_w = 220, 760, 18, 150
    height = row_h * len(timed) + 30
    width = label_w + bar_w + res_w + 20
    parts = [
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        ' role="img" aria-label="timeline of the steps">'
    ]
    for tick in range(5):
        x = label_w + bar_w * tick / 4
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 20}" stroke="#eee"/>'
            f'<text x="{x:.1f}" y="{height - 6}" font-size="10" text-anchor="middle"'
            f' fill="#777">+{_e(_duration(span * tick / 4))}</text>'
        )
    for row, step in enumerate(timed):
        y = row * row_h + 2
        start = float(step["started"]) - origin
        end_stamp = _stamp(step.get("finished"))
        end = (end_stamp if end_stamp is not None else last) - origin
        x = label_w + bar_w * start / span
        w = max(bar_w * (end - start) / span, 2.0)
        status = str(step.get("status"))
        colour = _COLOURS.get(status, "#888")
        tip = (
            f"{step['name']}: {status}, {_when(step.get('started'))} → {_when(end_stamp)}"
            f" ({_duration(end - start)}), {_resources(step)}"
        )
        name = _e(step["name"])
        parts.append(
            f'<a href="#{_anchor(str(step["name"]))}"><text x="{label_w - 6}" y="{y + 12}"'
            f' font-size="11" text-anchor="end">{name}</text></a>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 5}" rx="2"'
            f' fill="{colour}"><title>{_e(tip)}</title></rect>'
            f'<text x="{label_w + bar_w + 8}" y="{y + 12}" font-size="10"'
            f' fill="#555">{_e(_declared(step))}</text>'
        )
    parts.append("</svg>")
    return '<div class="svgbox">' + "".join(parts) + "</div>"


def _levels(nodes: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each node's column: the length of the longest dependency chain leading to it."""
    names = [str(n["name"]) for n in nodes]
    known = set(names)
    deps = {str(n["name"]): [str(d) for d in n.get("deps", []) if d in known] for n in nodes}
    dependants: dict[str, list[str]] = {name: [] for name in names}
    waiting = {name: len(deps[name]) for name in names}
    for name in names:
        for dep in deps[name]:
            dependants[dep].append(name)
    level = {name: 0 for name in names}
    ready = [name for name in names if waiting[name] == 0]
    while ready:
        current = ready.pop()
        for child in dependants[current]:
            level[child] = max(level[child], level[current] + 1)
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    return level


def _graph(nodes: Sequence[Mapping[str, Any]], status: Mapping[str, str]) -> str:
    if not nodes:
        return '<p class="muted">The manifest records no graph.</p>'
    level = _levels(nodes)
    columns: dict[int, list[str]] = {}
    for node in nodes:
        columns.setdefault(level[str(node["name"])], []).append(str(node["name"]))
    box_w, box_h, gap_x, gap_y = 170, 26, 60, 12
    position: dict[str, tuple[float, float]] = {}
    for col, members in columns.items():
        for row, name in enumerate(members):
            position[name] = (10 + col * (box_w + gap_x), 10 + row * (box_h + gap_y))
    width = 20 + (max(columns) + 1) * (box_w + gap_x)
    height = 20 + max(len(m) for m in columns.values()) * (box_h + gap_y)
    parts = [
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}"'
        ' role="img" aria-label="steps and their dependencies">'
    ]
    for node in nodes:
        x2, y2 = position[str(node["name"])]
        for dep in node.get("deps", []):
            if dep not in position:
                continue
            x1, y1 = position[dep]
            sx, sy, ex, ey = x1 + box_w, y1 + box_h / 2, x2, y2 + box_h / 2
            mid = (sx + ex) / 2
            parts.append(
                f'<path d="M{sx:.1f},{sy:.1f} C{mid:.1f},{sy:.1f} {mid:.1f},{ey:.1f}'
                f' {ex:.1f},{ey:.1f}" fill="none" stroke="#999" stroke-width="1.2">'
                f"<title>{_e(dep)} → {_e(node['name'])}</title></path>"
            )
    for node in nodes:
        name = str(node["name"])
        x, y = position[name]
        state = status.get(name, "pending")
        label = name if len(name) <= 24 else name[:22] + "…"
        parts.append(
            f'<a href="#{_anchor(name)}"><rect x="{x}" y="{y}" width="{box_w}" height="{box_h}"'
            f' rx="5" fill="{_COLOURS.get(state, "#888")}" fill-opacity="0.25"'
            f' stroke="{_COLOURS.get(state, "#888")}"><title>{_e(name)}: {_e(state)}</title>'
            f'</rect><text x="{x + 8}" y="{y + 17}" font-size="11">{_e(label)}</text></a>'
        )
    parts.append("</svg>")
    return '<div class="svgbox">' + "".join(parts) + "</div>"


def _log_links(base: str, logs: Mapping[str, Any]) -> str:
    """Links to a step's logs (stdout first) in the folder ``base`` leads to."""
    ordered = sorted(logs.items(), key=lambda item: (item[0] != "stdout", str(item[0])))
    return " · ".join(f'<a href="{_href(base, str(p))}">{_e(stream)}</a>' for stream, p in ordered)


def _cached_links(name: str, origin: str, disk: OnDisk) -> str:
    """Where a cached step's output is: this run did not run it, so it printed nothing here."""
    folder = disk.origins.get(origin)
    if folder is None:
        hint = f"(its logs are where that run ran: {logs_command(origin, name)})"
        return f'cached from run {_e(origin)} <span class="muted">{_e(hint)}</span>'
    said = f'cached from run <a href="{_href(folder.href, "")}">{_e(origin)}</a>'
    logs = folder.logs.get(name)
    if not logs:
        return f'{said} <span class="muted">(it printed nothing there)</span>'
    return f"{said}: {_log_links(folder.href, logs)}"


def _links(step: Mapping[str, Any], log_base: str, disk: OnDisk) -> str:
    """The step's logs: those its manifest lists and those found in its run folder.

    A step's logs enter the manifest when it ends, so the step a killed ninja
    was running has log files the manifest never listed.
    """
    name = str(step["name"])
    logs = {**disk.logs.get(name, {}), **(step.get("logs") or {})}
    if logs:
        return _log_links(log_base, logs)
    origin = (step.get("details") or {}).get("cached_from")
    if step.get("cached") and origin:
        return _cached_links(name, str(origin), disk)
    return '<span class="muted">no log</span>'


def _argv(argv: Iterable[Any] | None) -> str:
    if not argv:
        return "—"
    return f"<pre>{_e(shlex.join(str(a) for a in argv))}</pre>"


def _step_details(step: Mapping[str, Any], log_base: str, disk: OnDisk) -> str:
    status = str(step.get("status"))
    deps = step.get("deps") or []
    dep_links = ", ".join(f'<a href="#{_anchor(str(d))}">{_e(d)}</a>' for d in deps) or "—"
    details = step.get("details") or {}
    image = step.get("image")
    digest = step.get("image_digest")
    rows: list[tuple[str, str]] = [
        ("status", _badge(status)),
        ("depends on", dep_links),
        ("backend", _e(step.get("backend") or "—")),
        ("tool", _e(step.get("tool") or step.get("kind") or "—")),
        ("image", _e(f"{image} ({digest})" if image and digest else image or "—")),
        ("declared resources", _e(_resources(step))),
        ("started", _e(_when(step.get("started")))),
        ("finished", _e(_when(step.get("finished")))),
        ("duration", _e(_duration(step.get("duration")))),
        ("exit status", _e(step.get("returncode") if step.get("returncode") is not None else "—")),
        ("logs", _links(step, log_base, disk)),
    ]
    if step.get("signal_name"):
        rows.insert(-1, ("signal", _e(f"{step['signal_name']} ({step.get('signal')})")))
    if status == "unknown":
        rows.insert(1, ("note", _e(_UNSETTLED)))
    if step.get("error"):
        rows.insert(1, ("error", _e(step["error"])))
    if details.get("undying"):
        rows.insert(1, ("would not die", _e(", ".join(str(p) for p in details["undying"]))))
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    warnings = "".join(f"<li>{_e(w)}</li>" for w in step.get("warnings") or [])
    colour = _COLOURS.get(status, "#888")
    return (
        f'<details id="{_anchor(str(step["name"]))}" style="border-left-color:{colour}"'
        f"{' open' if status in ('failed', 'cancelled', 'unknown') else ''}>"
        f"<summary><b>{_e(step['name'])}</b> {_badge(status)}"
        f' <span class="muted">{_e(_duration(step.get("duration")))}</span></summary>'
        f"<table>{body}</table>{_argv(step.get('argv'))}"
        + (f"<ul>{warnings}</ul>" if warnings else "")
        + "</details>"
    )


_UNSETTLED = (
    "it was running when the run ended without recording how this step ended"
    " (its ninja killed?); its process may even still be running"
)


def _settled(step: Mapping[str, Any], stale: bool) -> Mapping[str, Any]:
    """``step`` as it stands once its run is over, when the manifest was last written
    while the run went on (``stale``): a step still pending never ran, and one still
    running ended no one knows how."""
    from shinobi.local_runs import settled_status

    status = step.get("status")
    settled = settled_status(status, stale) if isinstance(status, str) else status
    return step if settled == status else {**step, "status": settled}


def _run_state(manifest: Mapping[str, Any], disk: OnDisk) -> str:
    """How the run stands: the manifest's final word, else what its folder says.

    A manifest that still says ``running`` may be the last one a killed ninja
    wrote; the folder's lock tells, as ``ninja runs`` reads it.
    """
    recorded = str(manifest.get("status"))
    return disk.state if recorded == "running" and disk.state else recorded


#: What the graph says of a step a scatter repeats: its runs are its slices'.
_PER_SLICE = "run per slice"


def _repeated_by_scatter(nodes: Sequence[Mapping[str, Any]]) -> set[str]:
    """The graph nodes inside a scattered nested recipe (``sub.first``): each runs as
    its slices' steps (``sub[0].first``), never under its own name, so the run did
    not leave it unstarted."""
    scattered = tuple(f"{node['name']}." for node in nodes if node.get("scatter"))
    if not scattered:
        return set()
    return {name for node in nodes if (name := str(node["name"])).startswith(scattered)}


def render_report(
    manifest: Mapping[str, Any], log_base: str = "", disk: OnDisk | None = None
) -> str:
    """The HTML page for ``manifest``; ``log_base`` leads from the page to the run folder,
    ``disk`` is what that folder says beyond the manifest."""
    disk = disk or OnDisk()
    state = _run_state(manifest, disk)
    stale = manifest.get("status") == "running" and state != "running"
    steps = [_settled(s, stale) for s in manifest.get("steps") or []]
    nodes: list[Mapping[str, Any]] = list((manifest.get("graph") or {}).get("nodes") or [])
    recorded = {str(s["name"]) for s in steps}
    # Steps the run never reached still belong in the report: pending while it
    # goes on, not run once it has ended.
    unreached = "pending" if state == "running" else "not run"
    repeated = _repeated_by_scatter(nodes)
    for node in nodes:
        if str(node["name"]) not in recorded | repeated:
            steps.append({**node, "status": unreached, "logs": {}})
    status = {str(s["name"]): str(s.get("status")) for s in steps}
    status.update(dict.fromkeys(repeated, _PER_SLICE))
    recipe_name = (manifest.get("recipe") or {}).get("name", "")
    title = f"shinobi run {manifest.get('run_id', '')} — {recipe_name}"
    legend = " ".join(_badge(s) for s in _COLOURS)
    warnings = "".join(f"<li>{_e(w)}</li>" for w in manifest.get("warnings") or [])
    end_of_run = _stamp(manifest.get("finished")) or (disk.last_activity if stale else None)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{GENERATOR}'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        + _summary(manifest, state, disk)
        + (f"<h2>Warnings</h2><ul>{warnings}</ul>" if warnings else "")
        + f"<h2>Timeline</h2><p>{legend}</p>"
        + _timeline(steps, end_of_run)
        + "<h2>Graph</h2>"
        + _graph(nodes, status)
        + "<h2>Steps</h2>"
        + "".join(_step_details(s, log_base, disk) for s in steps)
        + "</body></html>\n"
    )
