"""Broken, doubled and misspelt plugins: one line that names the distribution and the fix.

Each case installs fake distributions (a dist-info folder and a module) in a
directory put first on ``sys.path`` of a fresh interpreter, as a user's
``pip install`` of a third-party plugin would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fake_plugins import BACKEND, DEMO, install, ninja


def _dist(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    install(site, dist, entry_points, modules)


def _run(site: Path, backend: str) -> subprocess.CompletedProcess[str]:
    """``ninja run`` of the demo recipe on ``backend``: refused before any step runs."""
    target = site / "made.ms"
    return _ninja(site, "run", f"{DEMO}:pipe", "--target", str(target), "--backend", backend)


_ninja = ninja
_BACKEND = BACKEND


def _broken(site: Path) -> None:
    _dist(
        site,
        "acme_broken",
        "[shinobi.backends]\nbroken = acme_broken_mod:Backend\n",
        {"acme_broken_mod.py": "import acme_missing_dependency\n"},
    )


def _twice(site: Path, group: str = "shinobi.backends") -> None:
    for dist, module in (("acme_twice_a", "acme_twice_a"), ("acme_twice_b", "acme_twice_b")):
        _dist(
            site,
            dist,
            f"[{group}]\ntwice = {module}:Backend\n",
            {f"{module}.py": _BACKEND},
        )


def test_a_broken_plugin_names_its_distribution_in_the_fix(tmp_path: Path) -> None:
    _broken(tmp_path)
    proc = _run(tmp_path, "broken")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "the backend 'broken' is installed but failed to load" in lines[0]
    assert "No module named 'acme_missing_dependency'" in lines[0]
    assert "reinstall acme_broken" in lines[0], lines[0]
    assert "its distribution" not in lines[0]


def test_backends_names_the_fix_for_a_plugin_that_fails_to_load(tmp_path: Path) -> None:
    _broken(tmp_path)
    proc = _ninja(tmp_path, "backends", "--no-check")
    assert proc.returncode == 0, proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if " broken " in line]
    assert "acme_broken" in row and "acme_missing_dependency" in row
    assert "reinstall acme_broken" in row, row
    assert " native " in proc.stdout  # the others are still listed


def test_a_name_installed_twice_does_not_take_the_listing_down(tmp_path: Path) -> None:
    """`ninja backends --no-check` (what `nox -s build` reads) lists everything else."""
    _twice(tmp_path)
    proc = _ninja(tmp_path, "backends", "--no-check", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    twice = [row for row in rows if row["name"] == "twice"]
    assert {row["distribution"] for row in twice} == {"acme_twice_a", "acme_twice_b"}
    assert not any(row["loads"] for row in twice)
    assert all("uninstall" in str(row["detail"]) for row in twice), twice
    assert any(row["name"] == "native" and row["loads"] for row in rows)


def test_doctor_survives_an_offload_engine_installed_twice(tmp_path: Path) -> None:
    """Doctor lists offload engines without probing them: a clash is a row, not a crash."""
    _twice(tmp_path, "shinobi.offload")
    proc = _ninja(tmp_path, "doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [row for row in json.loads(proc.stdout)["offload"] if row["name"] == "twice"]
    assert len(rows) == 2 and not any(row["loads"] for row in rows), rows


def test_a_name_installed_twice_says_which_distributions_to_choose_from(tmp_path: Path) -> None:
    _twice(tmp_path)
    proc = _run(tmp_path, "twice")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "acme_twice_a" in lines[0] and "acme_twice_b" in lines[0], lines[0]
    assert "uninstall" in lines[0]


def test_a_misspelt_backend_that_is_not_installed_still_gets_a_suggestion(
    tmp_path: Path,
) -> None:
    """'dokcer' with shinobi-containers absent: the suggestion leads to the install hint."""
    code = (
        "from shinobi.backends.registry import BACKENDS, check_name\n"
        "from shinobi.backends import registry\n"
        "registry.available = lambda group: ('native', 'venv')\n"
        "try:\n    check_name(BACKENDS, 'dokcer')\n"
        "except Exception as exc:\n    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "unknown backend 'dokcer'; did you mean 'docker'?" in out, out


def _exits(site: Path) -> None:
    _dist(
        site,
        "acme_exit",
        "[shinobi.backends]\nbye = acme_exit_mod:Backend\n",
        {"acme_exit_mod.py": "import sys\nsys.exit('acme needs the FOO library')\n"},
    )


def test_a_plugin_that_exits_at_import_is_a_row_not_the_end_of_the_listing(
    tmp_path: Path,
) -> None:
    _exits(tmp_path)
    proc = _ninja(tmp_path, "backends", "--no-check")
    assert proc.returncode == 0, proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if " bye " in line]
    assert "acme needs the FOO library" in row and "reinstall acme_exit" in row, row
    assert " native " in proc.stdout


def test_a_plugin_that_exits_at_import_is_named_when_asked_for(tmp_path: Path) -> None:
    _exits(tmp_path)
    proc = _run(tmp_path, "bye")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "the backend 'bye' is installed but failed to load" in lines[0]
    assert "acme needs the FOO library" in lines[0] and "reinstall acme_exit" in lines[0]


ABSTRACT = (
    "from shinobi.backends.base import Backend as _Base\n"
    "class Abs(_Base):\n"
    "    name = 'abs'\n"  # no run(): abstract
    "def func(settings=None):\n"
    "    return None\n"
    "print('HELLO FROM PLUGIN')\n"
)


def test_an_entry_point_that_is_no_usable_backend_blames_its_plugin(tmp_path: Path) -> None:
    """It was 'internal error: TypeError: Can't instantiate abstract class' (exit 70)."""
    _dist(
        tmp_path,
        "acme_unusable",
        "[shinobi.backends]\nabstract = acme_unusable:Abs\nnotone = acme_unusable:func\n",
        {"acme_unusable.py": ABSTRACT},
    )
    for name in ("abstract", "notone"):
        proc = _run(tmp_path, name)
        assert proc.returncode == 2, proc.stderr
        (line,) = [x for x in proc.stderr.splitlines() if x.startswith("ninja: error:")]
        assert f"the backend {name!r} is installed but unusable" in line, line
        assert "acme_unusable's to mend" in line and "internal error" not in proc.stderr


def test_backends_json_stays_json_when_a_plugin_prints_on_import(tmp_path: Path) -> None:
    _dist(
        tmp_path,
        "acme_unusable",
        "[shinobi.backends]\nabstract = acme_unusable:Abs\n",
        {"acme_unusable.py": ABSTRACT},
    )
    proc = _ninja(tmp_path, "backends", "--json")
    rows = json.loads(proc.stdout)  # the plugin's print went to stderr
    assert any(row["name"] == "abstract" for row in rows)
    assert "HELLO FROM PLUGIN" in proc.stderr


def test_a_plugin_registering_native_is_the_one_blamed(tmp_path: Path) -> None:
    """It told the user to uninstall shinobi-core (or the plugin), though native still ran."""
    _dist(
        tmp_path,
        "acme_native",
        "[shinobi.backends]\nnative = acme_native:Backend\n",
        {"acme_native.py": _BACKEND},
    )
    rows = json.loads(_ninja(tmp_path, "backends", "--json", "--no-check").stdout)
    native = {row["distribution"]: row for row in rows if row["name"] == "native"}
    assert native["shinobi-core"]["loads"], native
    assert not native["acme_native"]["loads"]
    assert "uninstall acme_native" in str(native["acme_native"]["detail"])
    assert "shinobi-core" not in str(native["acme_native"]["detail"]).split("uninstall")[1]


def test_a_plugin_built_for_another_core_that_loads_is_listed_as_loading(tmp_path: Path) -> None:
    install(
        tmp_path,
        "acme_old",
        "[shinobi.backends]\nold = acme_old:Backend\n",
        {"acme_old.py": _BACKEND},
        requires=("shinobi-core>=99",),
    )
    (row,) = [
        r for r in json.loads(_ninja(tmp_path, "backends", "--json").stdout) if r["name"] == "old"
    ]
    assert row["loads"], row
    assert "built for another shinobi-core" in str(row["detail"])
    assert "install a shinobi-core acme_old accepts (shinobi-core>=99)" in str(row["detail"])


def _crashing(site: Path, body: str) -> None:
    module = (
        "from shinobi.backends.base import Backend as _Base\n"
        "class Backend(_Base):\n"
        "    name = 'crashy'\n"
        "    def run(self, invocation, control):\n"
        f"        {body}\n"
    )
    _dist(
        site,
        "acme_crashy",
        "[shinobi.backends]\ncrashy = acme_crashy:Backend\n",
        {"acme_crashy.py": module},
    )


def test_a_plugin_whose_run_raises_is_blamed_on_one_line(tmp_path: Path) -> None:
    """It read "internal error: RuntimeError: engine exploded" and the message's
    second line, naming neither the backend nor its distribution."""
    _crashing(tmp_path, "raise RuntimeError('engine exploded\\nwith detail')")
    done = _run(tmp_path, "crashy")
    assert done.returncode == 1, done.stderr
    assert (
        "backend 'crashy' (acme_crashy) raised RuntimeError: engine exploded: a fault of that"
        " backend, not of the step; report it to acme_crashy's authors"
    ) in done.stderr, done.stderr
    assert "with detail" not in done.stderr and "internal error" not in done.stderr


def test_a_plugin_whose_run_returns_nothing_is_blamed_too(tmp_path: Path) -> None:
    _crashing(tmp_path, "return None")
    done = _run(tmp_path, "crashy")
    assert done.returncode == 1, done.stderr
    assert "backend 'crashy' (acme_crashy) returned NoneType, not a BackendRun" in done.stderr


def test_a_backend_class_that_sets_no_name_runs_under_its_entry_point_s(tmp_path: Path) -> None:
    """It failed every step: "internal error: AttributeError: ... no attribute 'name'"."""
    nameless = (
        "from shinobi.backends.base import Backend\n"
        "from shinobi.backends.native import NativeBackend\n"
        "class Nameless(Backend):\n"
        "    def run(self, invocation, control):\n"
        "        return NativeBackend().run(invocation, control)\n"
    )
    _dist(
        tmp_path,
        "acme_nameless",
        "[shinobi.backends]\nnameless = acme_nameless:Nameless\n",
        {"acme_nameless.py": nameless},
    )
    done = _run(tmp_path, "nameless")
    assert done.returncode == 0, done.stderr
    assert "start   make (nameless)" in done.stderr, done.stderr


def test_a_fault_names_the_backend_the_run_chose(tmp_path: Path) -> None:
    """A class registered as 'child' that inherits name = 'parent' was blamed as
    'parent': a backend the user never chose, perhaps of another distribution."""
    _dist(
        tmp_path,
        "acme_child",
        "[shinobi.backends]\nchild = acme_child:Backend\n",
        {"acme_child.py": _BACKEND.replace("name = 'x'", "name = 'parent'")},
    )
    done = _run(tmp_path, "child")
    assert done.returncode == 1, done.stderr
    assert "backend 'child' (acme_child) raised RuntimeError" in done.stderr, done.stderr
    assert "parent" not in done.stderr


def _raising_in(site: Path, method: str) -> None:
    """acme_raising's backend 'raising', whose ``method`` raises RuntimeError."""
    bodies = {
        "__init__": "    def __init__(self, settings=None):\n"
        "        raise RuntimeError('license server unreachable')\n",
        "check_settings": "    @classmethod\n    def check_settings(cls, settings):\n"
        "        raise RuntimeError('license server unreachable')\n",
    }
    _dist(
        site,
        "acme_raising",
        "[shinobi.backends]\nraising = acme_raising:Backend\n",
        {"acme_raising.py": _BACKEND + bodies[method]},
    )


def _blamed(method: str) -> str:
    return (
        "backend 'raising' (acme_raising) raised RuntimeError: license server unreachable in its"
        f" {method}: a fault of that backend; report it to acme_raising's authors"
    )


def test_a_plugin_whose_constructor_raises_is_blamed_on_one_line(tmp_path: Path) -> None:
    """It was "internal error: RuntimeError ... please report it" (exit 70), naming
    no distribution; `ninja backends` called it "check() raised"."""
    _raising_in(tmp_path, "__init__")
    done = _run(tmp_path, "raising")
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == f"ninja: error: {_blamed('constructor')}", done.stderr
    (row,) = [
        r
        for r in json.loads(_ninja(tmp_path, "backends", "--json").stdout)
        if r["name"] == "raising"
    ]
    assert row["detail"] == _blamed("constructor")


def test_a_plugin_whose_check_settings_raises_is_blamed_by_doctor(tmp_path: Path) -> None:
    _raising_in(tmp_path, "check_settings")
    (row,) = [
        r
        for r in json.loads(_ninja(tmp_path, "backends", "--json").stdout)
        if r["name"] == "raising"
    ]
    assert row["detail"] == _blamed("check_settings()")
    doctor = _ninja(tmp_path, "doctor", "--json")
    assert _blamed("check_settings()") in json.loads(doctor.stdout)["config"]["problems"]


def test_doctor_refuses_an_offload_entry_point_that_is_no_offload_target(tmp_path: Path) -> None:
    """A Backend registered as an offload engine was listed as "installed"; only
    `ninja compile --engine` refused it."""
    _dist(
        tmp_path,
        "acme_notarget",
        "[shinobi.offload]\nnotarget = acme_notarget:Backend\n",
        {"acme_notarget.py": _BACKEND},
    )
    (row,) = [
        r
        for r in json.loads(_ninja(tmp_path, "doctor", "--json").stdout)["offload"]
        if r["name"] == "notarget"
    ]
    assert row["usable"] is False, row
    assert "which is not a shinobi OffloadTarget class" in str(row["detail"])
    assert "acme_notarget's to mend" in str(row["detail"])


def test_backends_without_probing_still_refuses_an_entry_point_that_is_no_backend(
    tmp_path: Path,
) -> None:
    _dist(
        tmp_path,
        "acme_unusable",
        "[shinobi.backends]\nnotone = acme_unusable:func\n",
        {"acme_unusable.py": ABSTRACT},
    )
    (row,) = [
        r
        for r in json.loads(_ninja(tmp_path, "backends", "--no-check", "--json").stdout)
        if r["name"] == "notone"
    ]
    assert row["usable"] is False and "not a shinobi Backend class" in str(row["detail"]), row
