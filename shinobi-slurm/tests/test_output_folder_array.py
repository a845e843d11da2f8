"""A scatter imaging into one shared folder is a free array on Slurm.

Each slice's ``outdir`` input (``writable=False``) holds only its own image
``{outdir}/{ms.stem}-image.fits``; compile took the folder for a path the
slices rewrite and wrote ``--array=0-2%1``, so the tasks ran one at a time.
"""

from __future__ import annotations

from pathlib import Path

from conftest import Ninja
from launches import steps, submit, wait_final

RECIPE = """
from pydantic import BaseModel
from shinobi.steps import MS, Cab, Directory, File, ParamMeta, Recipe

SCRIPT = (
    'n="$1/$(basename "$2" .ms)"; date +%s.%N > "$n.start"; sleep 3;'
    ' echo img > "$n-image.fits"; date +%s.%N > "$n.end"'
)

class ImIn(BaseModel):
    outdir: Directory
    ms: MS

class ImOut(BaseModel):
    image: File

image = Cab("image", ["/bin/sh", "-c", SCRIPT, "image"], ImIn, ImOut, {
    "outdir": ParamMeta(positional=True, writable=False),
    "ms": ParamMeta(positional=True, writable=False),
    "image": ParamMeta(implicit="{outdir}/{ms.stem}-image.fits"),
})

class RIn(BaseModel):
    mss: list[MS]
    outdir: Directory = "imgs"

class ROut(BaseModel):
    images: list[File]

r = Recipe("imaging", RIn, ROut, max_workers=4)
r.add_step("img", image, scatter=["ms"], ms=r.inputs.mss, outdir=r.inputs.outdir)
r.set_output("images", r.outputs.img.image)
"""

NAMES = ("a", "b", "c")


def _prepare(tmp_path: Path) -> list[str]:
    (tmp_path / "r.py").write_text(RECIPE)
    (tmp_path / "imgs").mkdir()
    args = []
    for name in NAMES:
        (tmp_path / f"{name}.ms").mkdir()
        args += ["--mss", f"{name}.ms"]
    return [f"{tmp_path}/r.py:r", *args, "--container-runtime", "none"]


def test_the_array_is_not_throttled_to_one_task(ninja: Ninja, tmp_path: Path) -> None:
    done = ninja("compile", *_prepare(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "#SBATCH --array=0-2\n" in done.stdout, done.stdout
    assert "one at a time" not in done.stdout + done.stderr


def test_the_tasks_run_together_on_slurm(ninja: Ninja, tmp_path: Path, slurm: None) -> None:
    launch = submit(ninja, *_prepare(tmp_path), cwd=tmp_path)
    found = wait_final(ninja, launch["handle"], cwd=tmp_path)
    assert found["state"] == "completed", steps(found)
    spans = [
        tuple(float((tmp_path / "imgs" / f"{n}.{end}").read_text()) for end in ("start", "end"))
        for n in NAMES
    ]
    assert max(start for start, _ in spans) < min(end for _, end in spans), spans
