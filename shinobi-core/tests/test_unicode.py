"""A path whose name is not UTF-8 (``lat\\xe9in``, legal on Linux and
common in old archives) runs end to end on native. The step cache's digest memo
hashed such a directory's name with a strict ``str.encode()`` and the step
failed with "internal error: UnicodeEncodeError"."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from cli_in_process import in_process

from shinobi.file_digests import DigestMemo

COPY = """
from pydantic import BaseModel
from shinobi.steps import Cab, ParamMeta, File, Recipe

class In(BaseModel):
    src: File
    out: File

class Out(BaseModel):
    out: File

cp = Cab(name="cp", command=["/bin/sh", "-c",
         'set -e; mkdir -p "$(dirname "$1")"; echo "copying $0"; cat "$0" > "$1"'],
         inputs_model=In, outputs_model=Out,
         field_meta={"src": ParamMeta(positional=True), "out": ParamMeta(positional=True)})
rec = Recipe("rec", In, Out)
rec.add_step("cp", cp, src=rec.inputs.src, out=rec.inputs.out)
rec.set_output("out", rec.outputs.cp.out)
"""


@pytest.fixture
def latin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory named ``lat\\xe9in`` (Latin-1 bytes) holding ``in``; cwd is tmp_path."""
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/lat\xe9in"))
    folder.mkdir()
    (folder / "in").write_bytes(b"latin\n")
    (tmp_path / "r.py").write_text(textwrap.dedent(COPY))
    monkeypatch.chdir(tmp_path)
    return folder


def _statuses(out: bytes) -> dict[str, str]:
    return {step["name"]: step["status"] for step in json.loads(out)["steps"]}


def test_digests_of_a_non_utf8_file_and_of_a_folder_holding_one(tmp_path: Path) -> None:
    """The memo's shard of a non-UTF-8 folder, and a folder listing such a name, hash."""
    memo = DigestMemo(tmp_path / "memo")
    inner = os.fsdecode(bytes(tmp_path) + b"/d\xe9")
    os.mkdir(inner)
    name = os.path.join(inner, os.fsdecode(b"f\xe9"))
    Path(name).write_bytes(b"x")
    first = memo.digest(name), memo.digest(inner)
    assert first[0].startswith("file:") and first[1].startswith("dir:")
    memo.save()
    assert (DigestMemo(tmp_path / "memo").digest(name), memo.digest(inner)) == first


def test_a_non_utf8_path_runs_is_cached_and_is_recorded(
    latin: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Spawn, cache key, manifest, --json, `ninja logs` and `ninja report` all take it."""
    src, out = str(latin / "in"), str(latin / "o" / "o")
    args = ("run", "r.py:rec", "--src", src, "--out", out, "--json")
    code, printed, err = in_process(capsysbinary, *args, "--provenance")
    assert code == 0, err
    document = json.loads(printed)
    assert document["outputs"]["out"] == out  # JSON escapes it; it reads back the same
    assert Path(out).read_bytes() == b"latin\n"
    (run,) = os.listdir(".shinobi/runs")
    manifest = json.loads(Path(".shinobi/runs", run, "manifest.json").read_text())
    assert src in json.dumps(manifest["steps"], ensure_ascii=False)

    code, logs, err = in_process(capsysbinary, "logs", run)
    assert code == 0, err
    assert b"copying " + os.fsencode(src) in logs  # the tool's own bytes
    code, _, err = in_process(capsysbinary, "report", run, "-o", "report.html")
    assert code == 0, err
    assert Path("report.html").is_file()

    code, again, err = in_process(capsysbinary, *args)
    assert code == 0, err
    assert _statuses(again) == {"cp": "cached"}
