"""An output named outside every mount fails its container step.

A tool given its output directory as a ``str`` (or a pystep its path), which
then reports the path it wrote (a wrangler, a return value), wrote into the
container's own filesystem: nothing mounted it. The step passed with the
stale file the host had there, or was said not to have created it. Now it
fails saying the write stayed in the container and how to have it mounted.
"""

from __future__ import annotations

import importlib
import json
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_engines import image, live_backend, settings_for
from pydantic import BaseModel

from recipes import config_for
from shinobi.runner import run_recipe
from shinobi.steps import Cab, File, ParamMeta, Wrangler
from shinobi_containers.apptainer import configured_binds
from shinobi_containers.engine import binds_in
from shinobi_containers.podman import configured_volumes

ENGINES = ("docker", "podman", "apptainer")


class In(BaseModel):
    outdir: str


class Out(BaseModel):
    product: File


def wrote(engine: str) -> Cab:
    """The audit's cab: it makes ``OUTDIR/p.txt`` and prints where."""
    script = 'mkdir -p "$1" && echo FRESH > "$1/p.txt" && echo "wrote $1/p.txt"'
    return Cab(
        name="t",
        command=["sh", "-c", script, "sh"],
        inputs_model=In,
        outputs_model=Out,
        field_meta={"outdir": ParamMeta(positional=True)},
        image=image(engine),
        wranglers=[Wrangler(r"^wrote (.+)$", "output", output="product")],
    )


PYSTEP = """
from pathlib import Path
import shinobi
from shinobi.steps import File

@shinobi.pystep(image={image!r})
def w(out: str) -> File:
    p = Path(out)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("data\\n")
    return p
"""


def _pystep_module(work: Path, name: str, source: str, engine: str) -> Any:
    """``source`` (its ``{image}`` the engine's python image) imported as module ``name``."""
    (work / f"{name}.py").write_text(source.format(image=image(engine, "python")))
    sys.path.insert(0, str(work))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(work))


def _run(engine: str, step: Any, inputs: dict[str, str], cwd: Path) -> Any:
    live_backend(engine)
    return run_recipe(
        step, inputs, backend=engine, config=config_for(engine), cwd=cwd, use_cache=False
    )


def _stale(tmp_path: Path, name: str) -> Path:
    """A product an earlier run left outside the working directory."""
    old = tmp_path / "old" / name
    old.parent.mkdir(parents=True)
    old.write_text("STALE\n")
    return old


@pytest.fixture
def outside() -> Iterator[Path]:
    """A host directory no mount shows the step, yet writable inside every engine's
    container: apptainer's image is read-only but for the ``/tmp`` ``--contain``
    gives it, so a place under ``/tmp`` (whatever TMPDIR pytest was given) has
    the write succeed in the container and the unseen-output check decide."""
    place = Path(tempfile.mkdtemp(prefix="shinobi-unseen-", dir="/tmp"))
    yield place
    shutil.rmtree(place, ignore_errors=True)


def _assert_unseen(result: Any, engine: str) -> None:
    assert result.status == "failed"
    error = result.steps[0].error or ""
    assert "outside every directory mounted into its" in error and engine in error, error
    assert "path-typed input" in error and "\n" not in error
    assert "did not create" not in error and "does not exist" not in error


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wrangled_product_outside_the_mounts_fails(
    engine: str, tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "work").mkdir()
    old = _stale(outside, "p.txt")
    result = _run(engine, wrote(engine), {"outdir": str(old.parent)}, tmp_path / "work")
    _assert_unseen(result, engine)
    assert old.read_text() == "STALE\n"
    # and one never there is not said to be uncreated
    fresh = {"outdir": str(outside / "new")}
    _assert_unseen(_run(engine, wrote(engine), fresh, tmp_path / "work"), engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_wrangled_product_in_the_working_directory_passes(engine: str, tmp_path: Path) -> None:
    result = _run(engine, wrote(engine), {"outdir": "sub dir"}, tmp_path)
    assert result.ok, result.error
    assert (tmp_path / "sub dir" / "p.txt").read_text() == "FRESH\n"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pystep_returning_a_path_outside_the_mounts_fails(
    engine: str, tmp_path: Path, outside: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    module = _pystep_module(work, f"c3_unseen_{engine}", PYSTEP, engine)
    old = _stale(outside, "x.txt")
    result = _run(engine, module.w, {"out": str(old)}, work)
    _assert_unseen(result, engine)
    assert result.steps[0].error.startswith("the pystep's output 'result' names")
    assert old.read_text() == "STALE\n"


class TextVis(BaseModel):
    vis: str


def check(engine: str) -> Cab:
    """The audit's tool given its MS as a ``str``: it fails in its own words."""
    script = 'test -d "$1" || { echo "$1: not a measurement set" >&2; exit 3; }'
    return Cab(
        name="check",
        command=["sh", "-c", script, "sh"],
        inputs_model=TextVis,
        field_meta={"vis": ParamMeta(positional=True)},
        image=image(engine),
    )


PYSTEP_READS = """
from pathlib import Path
import shinobi

@shinobi.pystep(image={image!r})
def r(vis: str) -> str:
    return Path(vis, "table.dat").read_text()
"""


def _assert_hinted(result: Any, engine: str) -> None:
    assert result.status == "failed"
    hints = [w for w in result.steps[0].warnings if w.startswith("input 'vis' is the text")]
    assert len(hints) == 1, result.steps[0].warnings
    assert f"{engine} container" in hints[0] and "File, Directory, MS or Path" in hints[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_text_input_naming_an_unmounted_host_path_is_hinted_at_on_failure(
    engine: str, tmp_path: Path, outside: Path
) -> None:
    (outside / "obs1.ms").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    (work / "here.ms").mkdir()
    _assert_hinted(_run(engine, check(engine), {"vis": str(outside / "obs1.ms")}, work), engine)
    # under the working directory it is mounted, str or not: no failure, no hint
    assert _run(engine, check(engine), {"vis": "here.ms"}, work).ok


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pystep_text_input_naming_an_unmounted_host_path_is_hinted_at(
    engine: str, tmp_path: Path, outside: Path
) -> None:
    (outside / "obs1.ms").mkdir()
    (outside / "obs1.ms" / "table.dat").write_text("rows\n")
    work = tmp_path / "work"
    work.mkdir()
    module = _pystep_module(work, f"c3_reads_{engine}", PYSTEP_READS, engine)
    _assert_hinted(_run(engine, module.r, {"vis": str(outside / "obs1.ms")}, work), engine)


def _bind_flags(engine: str, place: Path) -> list[str]:
    """``run_flags`` that bind ``place`` as a site would: the testbed's flags kept."""
    given = settings_for(engine).get("run_flags") or []
    flags = shlex.split(given) if isinstance(given, str) else list(given)
    if engine == "apptainer":
        return [*flags, "--bind", str(place)]
    return [*flags, "-v", f"{place}:{place}"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_product_in_a_place_the_site_binds_passes(engine: str, tmp_path: Path) -> None:
    """A bind in run_flags (``-v /scratch:/scratch``) shows the step more than ninja
    mounted: ninja cannot know what, so an output there is not failed."""
    (tmp_path / "work").mkdir()
    old = _stale(tmp_path, "p.txt")
    live_backend(engine)
    config = config_for(engine, run_flags=_bind_flags(engine, old.parent))
    step = wrote(engine)
    result = run_recipe(
        step, {"outdir": str(old.parent)}, backend=engine, config=config, cwd=tmp_path / "work"
    )
    assert result.ok, result.error
    assert old.read_text() == "FRESH\n"


def test_an_apptainer_bind_variable_is_a_bind_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "work").mkdir()
    old = _stale(tmp_path, "p.txt")
    live_backend("apptainer")
    monkeypatch.setenv("APPTAINER_BIND", str(old.parent))
    result = _run("apptainer", wrote("apptainer"), {"outdir": str(old.parent)}, tmp_path / "work")
    assert result.ok, result.error
    assert old.read_text() == "FRESH\n"


@pytest.mark.parametrize(
    ("flags", "binds"),
    [
        (["-v", "/a:/a"], True),
        (["-v/a:/a"], True),
        (["--volume=/a:/a"], True),
        (["--mount", "type=bind,src=/a,dst=/a"], True),
        (["--bind", "/a"], True),
        (["-B/a"], True),
        (["--shm-size", "2g", "--network", "none"], False),
        ([], False),
    ],
)
def test_binds_in_run_flags(flags: list[str], binds: bool) -> None:
    assert binds_in(flags) is binds


def test_the_site_configuration_binds_are_read(tmp_path: Path) -> None:
    conf = tmp_path / "apptainer.conf"
    conf.write_text(
        "#bind path = /opt\nbind path = /etc/localtime\n  bind path = /scratch:/data\nmount tmp = yes\n"
    )
    fake = tmp_path / "apptainer"
    fake.write_text(f"#!/bin/sh\necho PREFIX=/usr\necho APPTAINER_CONF_FILE={conf}\n")
    fake.chmod(0o755)
    assert configured_binds(str(fake)) == ("/etc/localtime", "/data")
    conf.unlink()
    assert configured_binds(str(fake)) is None  # unreadable: ninja cannot tell


def _site_conf(tmp_path: Path, volume: Path) -> Path:
    """This host's containers.conf, plus ``volumes`` a site would give every container."""
    own = Path("/etc/containers/containers.conf")
    text = own.read_text() if own.exists() else ""
    line = f"volumes = [{json.dumps(f'{volume}:{volume}')}]\n"
    if "[containers]" in text:
        text = text.replace("[containers]\n", "[containers]\n" + line, 1)
    else:
        text = "[containers]\n" + line + text
    conf = tmp_path / "containers.conf"
    conf.write_text(text)
    return conf


def test_a_product_in_a_podman_site_volume_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """containers.conf's volumes show the step more than ninja mounted, as a -v does."""
    (tmp_path / "work").mkdir()
    old = _stale(tmp_path, "p.txt")
    live_backend("podman")
    monkeypatch.setenv("CONTAINERS_CONF", str(_site_conf(tmp_path, old.parent)))
    result = _run("podman", wrote("podman"), {"outdir": str(old.parent)}, tmp_path / "work")
    assert result.ok, result.error
    assert old.read_text() == "FRESH\n"


def test_containers_conf_volumes_are_read(tmp_path: Path) -> None:
    plain = tmp_path / "plain.conf"
    plain.write_text('[containers]\nnetns = "none"\n')
    given = tmp_path / "given.conf"
    given.write_text('[containers]\nvolumes = ["/data:/data"]\n')
    broken = tmp_path / "broken.conf"
    broken.write_text("[containers\n")
    assert configured_volumes([str(plain), str(tmp_path / "missing.conf")]) is False
    assert configured_volumes([str(plain), str(given)]) is True
    assert configured_volumes([str(broken)]) is None  # unreadable: ninja cannot tell
