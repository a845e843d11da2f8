"""The edge ``--explain`` shows for a job waiting on several paths inside one it
reads is named by the first of them linked; they were walked in a set's order,
which follows string hashing and changes from one process to the next, so the
same compile named ``imgs/a.fits`` in one run and ``imgs/b.fits`` in another."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    from pydantic import BaseModel

    from shinobi.graph import build_graph
    from shinobi.offload.jobs import build_jobs
    from shinobi.offload.ordering import derive_edges
    from shinobi.plan import plan_graph
    from shinobi.steps import Cab, Directory, File, OutputRef, ParamMeta, Recipe, StepRef

    class Nothing(BaseModel):
        pass

    class Made(BaseModel):
        first: File
        second: File
        third: File

    class Reads(BaseModel):
        folder: Directory

    names = {"first": "imgs/a.fits", "second": "imgs/b.fits", "third": "imgs/c.fits"}
    make = Cab("make", ["/bin/true"], Nothing, Made,
               {n: ParamMeta(implicit=p) for n, p in names.items()})
    look = Cab("look", ["/bin/true"], Reads, None, {"folder": ParamMeta(positional=True)})
    recipe = Recipe(name="r", inputs_model=Nothing, steps=[
        StepRef("make", make, {}),
        StepRef("look", look, {"folder": "imgs"}),
    ])
    jobs = build_jobs(plan_graph(build_graph(recipe), {}, "/data"), "/data", "run")
    derive_edges(jobs)
    print([edge.detail for job in jobs.jobs for edge in job.edges])
    """
)


def test_the_edge_named_is_the_same_whatever_the_hash_seed(tmp_path: Path) -> None:
    script = tmp_path / "edges.py"
    script.write_text(SCRIPT)
    said = set()
    for seed in range(8):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        done = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True
        )
        said.add(done.stdout.strip())
    assert said == {"['/data/imgs/a.fits (inside /data/imgs)']"}
