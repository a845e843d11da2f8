"""From a plan to jobs: wiring edges and why, loop guards, scatter tasks, nesting, containers."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel
from test_offload_fixtures import PathIn, PathOut, plan_of, touch

import shinobi.backends as backends
from shinobi.backends.base import Backend, BackendRun, Invocation, Rendered, RunControl
from shinobi.errors import BackendNotFound, UsageError
from shinobi.offload.base import CompileOptions, OffloadRefused, Script, Workflow, compile_jobs
from shinobi.offload.jobs import Job, build_jobs, describe_edge
from shinobi.offload.wrapping import wrap_in_containers
from shinobi.steps import Cab, InputRef, OutputRef, ParamMeta, Recipe, StepRef, pystep


def pipe() -> Recipe:
    return Recipe(
        name="pipe",
        inputs_model=PathIn,
        steps=[
            StepRef("make", touch, {"path": InputRef("path")}),
            StepRef("use", touch, {"path": OutputRef("make", "path")}),
        ],
    )


def test_a_wired_edge_says_which_input_takes_which_output() -> None:
    graph = build_jobs(plan_of(pipe(), {"path": "x"}), "/w", "run")
    make, use = graph.jobs
    assert make.commands == [["/bin/touch", "x"]] and not make.edges
    assert [(e.before, e.kind, e.detail) for e in use.edges] == [(0, "wired", "path <- make.path")]
    assert describe_edge(graph, use, use.edges[0]) == "after make: wired (path <- make.path)"


class LoopIn(BaseModel):
    ms: Path = Path("obs.ms")
    flag: Path = Path("converged")


class LoopOut(BaseModel):
    ms: Path | None = None
    flag: Path | None = None


body = Cab(
    name="cal",
    command="/bin/true",
    inputs_model=LoopIn,
    outputs_model=LoopOut,
    field_meta={"ms": ParamMeta(positional=True, mutable=True), "flag": ParamMeta(positional=True)},
)


def test_loop_iterations_after_the_first_carry_the_guard_as_an_absolute_path() -> None:
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop("l", body, max_iter=3, until="flag")
    graph = build_jobs(plan_of(recipe), "/w", "run")
    assert [j.name for j in graph.jobs] == ["l.1", "l.2", "l.3"]
    assert [j.guard for j in graph.jobs] == [None, "/w/converged", "/w/converged"]
    kinds = {(graph.jobs[e.before].name, e.kind) for e in graph.jobs[2].edges}
    assert ("l.2", "loop") in kinds


def test_only_the_job_writing_the_until_file_in_the_last_iteration_ends_the_loop() -> None:
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop("l", body, max_iter=3, until="flag")
    outer = Recipe(name="outer", outputs_model=LoopOut, steps=[StepRef("in", recipe)])
    graph = build_jobs(plan_of(outer), "/w", "run")
    assert [(j.name, j.loop_end) for j in graph.jobs] == [
        ("in.l.1", None),
        ("in.l.2", None),
        ("in.l.3", ("in.l", 3, "/w/converged")),
    ]


def test_only_the_first_iteration_records_the_until_file_as_it_was_before_the_loop() -> None:
    """The file is looked at as the loop starts (shinobi.stale_until): recorded by a
    later cycle's job instead, the flag the first cycle wrote would pass for one an
    earlier run left, and the loop would run on past convergence."""
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop("l", body, max_iter=3, until="flag")
    graph = build_jobs(plan_of(recipe), "/w", "run")
    assert [j.until_file for j in graph.jobs] == ["/w/converged", None, None]


class _Many(BaseModel):
    paths: list[Path]


def scattered_job(paths: list[str], cwd: str = "/w") -> Job:
    """The one job of a recipe that touches each of ``paths``, scattered over them."""
    recipe = Recipe(
        name="r",
        inputs_model=_Many,
        steps=[StepRef("each", touch, {"path": InputRef("paths")}, scatter=("path",))],
    )
    (job,) = build_jobs(plan_of(recipe, {"paths": paths}, cwd=cwd), cwd, "run").jobs
    return job


def test_a_scatter_is_one_job_with_a_command_per_slice() -> None:
    job = scattered_job(["a", "b", "c"])
    assert job.tasks == 3 and job.commands == [["/bin/touch", p] for p in "abc"]
    assert [u.path for u in job.paths] == ["/w/a", "/w/b", "/w/c"]


def test_only_a_required_harvested_output_is_checked_for_a_match() -> None:
    """``ninja run`` passes a step whose optional glob matched nothing (its
    default, an empty list, stands); a job checking it would fail on the cluster."""

    class Found(BaseModel):
        found: list[Path] = []
        needed: list[Path]

    finder = Cab(
        name="find",
        command="/bin/true",
        outputs_model=Found,
        field_meta={"found": ParamMeta(harvest="*.fits"), "needed": ParamMeta(harvest="*.ms")},
    )
    recipe = Recipe(name="r", steps=[StepRef("find", finder, {})])
    (job,) = build_jobs(plan_of(recipe, cwd="/w"), "/w", "run").jobs
    assert job.expected == [[("needed", "/w/*.ms", "glob")]]


def test_a_nested_recipe_is_flattened_and_its_roots_wait_for_its_inputs() -> None:
    inner = Recipe(
        name="inner",
        inputs_model=PathIn,
        outputs_model=PathOut,
        steps=[
            StepRef("one", touch, {"path": InputRef("path")}),
            StepRef("two", touch, {"path": OutputRef("one", "path")}),
        ],
        output_wiring={"path": OutputRef("two", "path")},
    )
    outer = Recipe(
        name="outer",
        steps=[
            StepRef("first", touch, {"path": Path("x")}),
            StepRef("sub", inner, {"path": OutputRef("first", "path")}),
            StepRef("last", touch, {"path": OutputRef("sub", "path")}),
        ],
    )
    graph = build_jobs(plan_of(outer), "/w", "run")
    names = [j.name for j in graph.jobs]
    assert names == ["first", "sub.one", "sub.two", "last"]
    after = {j.name: sorted(graph.jobs[i].name for i in j.after()) for j in graph.jobs}
    assert after["sub.one"] == ["first"] and after["sub.two"] == ["sub.one"]
    assert after["last"] == ["sub.one", "sub.two"]


class Wrapper(Backend):
    """A stand-in container backend: what matters is that its render() is used."""

    name = "wrapper"

    def run(self, invocation: Invocation, control: RunControl) -> BackendRun:
        raise AssertionError("compile must never run anything")

    def render(self, invocation: Invocation) -> list[str]:
        return ["wrap", str(invocation.image), *invocation.argv]


def test_commands_are_wrapped_by_the_container_backends_own_render(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boxed = Cab(name="boxed", command="/bin/true", image="busybox:1")
    recipe = Recipe(
        name="r", steps=[StepRef("boxed", boxed, {}), StepRef("bare", Cab("bare", "/bin/true"), {})]
    )
    monkeypatch.setattr(backends, "get_backend", lambda name, settings=None: Wrapper())
    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "docker")
    assert graph.jobs[0].commands == [["wrap", "busybox:1", "/bin/true"]]
    assert graph.jobs[1].commands == [["/bin/true"]]
    assert any("declare no image (bare)" in w for w in graph.warnings)


class StoppableWrapper(Wrapper):
    """A stand-in whose payload outlives its client, like a daemon's container."""

    def render_for_job(self, invocation: Invocation, *, batch: bool = False) -> Rendered:
        return Rendered(self.render(invocation), ["unwrap", str(invocation.step)])


def test_a_payload_that_outlives_its_client_gives_its_job_a_stop_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    boxed = Cab(name="boxed", command="/bin/true", image="busybox:1")
    recipe = Recipe(name="r", steps=[StepRef("boxed", boxed, {})])
    monkeypatch.setattr(backends, "get_backend", lambda name, settings=None: StoppableWrapper())
    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "docker")
    assert graph.jobs[0].commands == [["wrap", "busybox:1", "/bin/true"]]
    assert graph.jobs[0].stops == [["unwrap", "boxed"]]
    monkeypatch.setattr(backends, "get_backend", lambda name, settings=None: Wrapper())
    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "docker")
    assert graph.jobs[0].stops == []  # the default: the payload dies with the job


class NamedWrapper(Wrapper):
    """A stand-in that says which runtime rendered a command."""

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime

    def render(self, invocation: Invocation) -> list[str]:
        return [self.runtime, *invocation.argv]


def test_auto_runs_each_step_in_the_container_backend_it_runs_in_under_ninja_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A step declared backend="apptainer" (or inheriting a container backend.default)
    kept it on the cluster only with --container-runtime; by default it ran on the
    node's bare software with a note, though the recipe was to move unchanged."""
    boxed = Cab(name="boxed", command="/bin/true", image="busybox:1")
    recipe = Recipe(name="r")
    recipe.add_step("own", boxed, backend="apptainer")
    recipe.add_step("inherited", boxed)
    recipe.add_step("bare", Cab("bare", "/bin/true"))
    monkeypatch.setattr(backends, "get_backend", lambda name, settings=None: NamedWrapper(name))

    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "auto", default_backend="podman")
    commands = {job.name: job.commands for job in graph.jobs}
    assert commands == {
        "own": [["apptainer", "/bin/true"]],
        "inherited": [["podman", "/bin/true"]],
        "bare": [["/bin/true"]],
    }
    assert [job.runtime for job in graph.jobs] == ["apptainer", "podman", "none"]
    assert graph.warnings == []

    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "auto")  # backend.default native: the image is not used
    assert graph.jobs[1].commands == [["/bin/true"]]
    assert "declare an image (inherited)" in graph.warnings[0]
    assert "not a container backend" in graph.warnings[0]

    graph = build_jobs(plan_of(recipe), "/w", "run")
    wrap_in_containers(graph, "docker", default_backend="podman")  # one runtime for all
    assert [job.commands[0][0] for job in graph.jobs] == ["docker", "docker", "/bin/true"]


def test_no_container_runtime_runs_on_the_node_and_says_so_for_images() -> None:
    boxed = Cab(name="boxed", command="/bin/true", image="busybox:1")
    graph = build_jobs(plan_of(Recipe(name="r", steps=[StepRef("boxed", boxed, {})])), "/w", "run")
    wrap_in_containers(graph, "none")
    assert graph.jobs[0].commands == [["/bin/true"]]
    assert "--container-runtime" in graph.warnings[0]


def test_a_runtime_whose_plugin_is_missing_names_the_distribution(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shinobi.backends import registry

    monkeypatch.setattr(registry, "available", lambda group: ("native",))
    monkeypatch.setattr(
        registry, "load_plugin", lambda group, name: registry.check_name(group, name)
    )
    graph = build_jobs(plan_of(pipe(), {"path": "x"}), "/w", "run")
    with pytest.raises(BackendNotFound, match=r"pip install \./shinobi-containers"):
        wrap_in_containers(graph, "podman")
    with pytest.raises(UsageError, match="unknown container runtime"):
        wrap_in_containers(graph, "lxc")


def test_compile_jobs_refuses_with_every_reason() -> None:
    @pystep
    def py(path: Path) -> None:
        return None

    recipe = Recipe(
        name="r",
        steps=[
            StepRef("t", touch, {"path": Path("x")}, venv="/v"),
            StepRef("py", py, {"path": Path("x")}),
        ],
    )
    options = CompileOptions(workdir=Path("/w"), cwd=Path("/w"), run_id="run")
    with pytest.raises(OffloadRefused) as caught:
        compile_jobs(plan_of(recipe), options)
    assert len(caught.value.refusals) == 2
    assert "2 reasons" in str(caught.value) and "on a host of the cluster" in str(caught.value)


def test_a_workflow_renders_writes_and_explains(tmp_path: Path) -> None:
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run")
    jobs = compile_jobs(plan_of(pipe(), {"path": "x"}), options)
    workflow = Workflow(
        engine="test",
        options=options,
        jobs=jobs,
        scripts=[Script(j.name, f"{j.name}.sh", f"echo {j.name}\n") for j in jobs.jobs],
    )
    assert (
        workflow.render()
        == "# ---- make.sh (make) ----\necho make\n\n# ---- use.sh (use) ----\necho use\n"
    )
    written = workflow.write(tmp_path / "out")
    assert [Path(p).read_text() for p in written.paths] == ["echo make\n", "echo use\n"]
    assert written.removed == []
    explained = workflow.explain()
    assert explained[0] == "recipe 'pipe': 2 jobs, offload-eligible"
    assert "  make: starts at once (depends on nothing)" in explained
    assert "    after make: wired (path <- make.path)" in explained
    assert workflow.run_dir == tmp_path / ".shinobi" / "pipe" / "run"


def test_an_output_directory_missing_here_is_noted(tmp_path: Path) -> None:
    recipe = Recipe(
        name="r",
        steps=[
            StepRef("lost", touch, {"path": Path("/nonexistent-shinobi/x")}),
            StepRef("fine", touch, {"path": tmp_path / "y"}),
        ],
    )
    options = CompileOptions(workdir=tmp_path, cwd=tmp_path, run_id="run")
    jobs = compile_jobs(plan_of(recipe, cwd=str(tmp_path)), options)
    assert jobs.warnings == [
        "step 'lost' writes /nonexistent-shinobi/x, but /nonexistent-shinobi does not exist on"
        " this host: create it on storage the nodes share, or the job will fail unless the tool"
        " makes it"
    ]


class FlagIn(BaseModel):
    flag: Path


class FlagOut(BaseModel):
    flag: Path | None = None


def test_an_iteration_waiting_for_the_whole_one_before_is_a_loop_edge_not_a_wired_one() -> None:
    """``--explain`` said 'wired (declared)' of steps that share nothing but the loop."""
    check = Cab(
        name="check",
        command="/bin/true",
        inputs_model=FlagIn,
        outputs_model=FlagOut,
        field_meta={"flag": ParamMeta(skip=True)},
    )
    cycle = Recipe(name="cycle", inputs_model=LoopIn, outputs_model=LoopOut)
    cycle.add_step("cal", body, ms=cycle.inputs.ms, flag=cycle.inputs.flag)
    cycle.add_step("check", check, flag=Path("done.flag"))
    cycle.set_output("flag", cycle.outputs.check.flag)
    cycle.set_output("ms", cycle.inputs.ms)
    recipe = Recipe(name="r", outputs_model=LoopOut)
    recipe.add_loop("l", cycle, max_iter=2, until="flag")
    graph = build_jobs(plan_of(recipe), "/w", "run")
    second_check = next(j for j in graph.jobs if j.name == "l.2.check")
    edges = {graph.jobs[e.before].name: (e.kind, e.detail) for e in second_check.edges}
    assert edges["l.1.cal"] == ("loop", "iteration 2 waits for all of 1")
    assert all(kind != "wired" for kind, _ in edges.values()), edges
