"""build_graph rejects every malformed wiring, naming recipe, step and field."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from shinobi.graph import RecipeGraphError, build_graph
from shinobi.steps import Cab, File, InputRef, OutputRef, ParamMeta, Recipe, StepRef


class In(BaseModel):
    target: str = "x"


class ToolIn(BaseModel):
    src: str | None = None


class ToolOut(BaseModel):
    result: str | None = None


tool = Cab("tool", "/bin/true", ToolIn, ToolOut, {"src": ParamMeta(positional=True)})


def recipe(*steps: StepRef, outputs: dict[str, object] | None = None) -> Recipe:
    return Recipe("pipe", In, ToolOut, steps=list(steps), output_wiring=outputs or {})


def test_a_valid_recipe_builds_with_its_edges() -> None:
    graph = build_graph(
        recipe(
            StepRef("a", tool, {"src": InputRef("target")}),
            StepRef("b", tool, {"src": OutputRef("a", "result")}),
        )
    )
    assert [n.name for n in graph.nodes] == ["a", "b"]
    assert graph.node("b").deps == (0,)


def test_duplicate_step_names_are_rejected() -> None:
    with pytest.raises(RecipeGraphError, match=r"recipe 'pipe', step 'a': the name is used twice"):
        build_graph(recipe(StepRef("a", tool), StepRef("a", tool)))


def test_inputref_to_a_missing_field_suggests_the_nearest() -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe(StepRef("a", tool, {"src": InputRef("targte")})))
    message = str(info.value)
    assert "recipe 'pipe', step 'a', input 'src'" in message
    assert "'targte'" in message and "did you mean 'target'?" in message


def test_outputref_to_a_missing_step_suggests_the_nearest() -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(
            recipe(
                StepRef("make", tool), StepRef("use", tool, {"src": OutputRef("mkae", "result")})
            )
        )
    assert "step 'use', input 'src'" in str(info.value)
    assert "'mkae', which does not exist; did you mean 'make'?" in str(info.value)


def test_outputref_to_a_missing_field_suggests_the_nearest() -> None:
    with pytest.raises(RecipeGraphError, match="has no output 'reslt'; did you mean 'result'"):
        build_graph(
            recipe(StepRef("make", tool), StepRef("use", tool, {"src": OutputRef("make", "reslt")}))
        )


def test_output_wiring_to_a_missing_step_is_rejected() -> None:
    with pytest.raises(RecipeGraphError, match=r"output 'result'.*'mkae'.*did you mean 'make'"):
        build_graph(recipe(StepRef("make", tool), outputs={"result": OutputRef("mkae", "result")}))


def test_output_wiring_to_a_missing_field_suggests_the_nearest() -> None:
    with pytest.raises(RecipeGraphError, match=r"output 'result'.*no output 'reslt'.*'result'"):
        build_graph(recipe(StepRef("make", tool), outputs={"result": OutputRef("make", "reslt")}))


def test_wiring_an_input_the_step_lacks_is_rejected() -> None:
    with pytest.raises(RecipeGraphError, match=r"step 'a', input 'sorce'.*did you mean 'src'"):
        build_graph(recipe(StepRef("a", tool, {"sorce": "x"})))


def test_a_cycle_is_shown() -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(
            recipe(
                StepRef("a", tool, {"src": OutputRef("c", "result")}),
                StepRef("b", tool, {"src": OutputRef("a", "result")}),
                StepRef("c", tool, {"src": OutputRef("b", "result")}),
            )
        )
    assert "cycle" in str(info.value)
    assert "a -> b -> c -> a" in str(info.value)


def test_a_step_wired_to_its_own_output_is_a_cycle() -> None:
    """Only a back edge that points forward was tested: a step reading its own
    output passed the quick order check, was drawn by --dryrun, and the run
    ended 'ninja: error: None'."""
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe(StepRef("a", tool, {"src": OutputRef("a", "result")})))
    assert str(info.value).startswith("recipe 'pipe', step 'a': the steps form a cycle: a -> a (")


def test_validation_waits_for_build_graph_so_forward_references_are_fine() -> None:
    pipe = Recipe("pipe", In, ToolOut)
    pipe.add_step("use", tool, src=pipe.outputs.make.result)  # 'make' does not exist yet
    pipe.add_step("make", tool, src=pipe.inputs.target)
    graph = build_graph(pipe)
    assert graph.node("use").deps == (graph.index["make"],)
    assert graph.topological_order() == [1, 0]


def test_nested_recipe_errors_are_reported_with_their_path() -> None:
    inner = recipe(StepRef("x", tool, {"src": InputRef("nope")}))
    outer = Recipe("outer", In, ToolOut)
    outer.add_step("inner", inner, target=outer.inputs.target)
    with pytest.raises(RecipeGraphError, match=r"recipe 'outer.inner', step 'x'"):
        build_graph(outer)


def test_a_non_step_is_rejected() -> None:
    with pytest.raises(RecipeGraphError, match="is not a step"):
        build_graph(recipe(StepRef("a", "not a cab")))


def test_base_model_itself_means_no_fields() -> None:
    bare = Recipe("bare", BaseModel, BaseModel)
    cab = Cab("bare", "true", BaseModel, BaseModel)
    assert bare.inputs_model is not BaseModel and bare.inputs_model.model_fields == {}
    assert cab.outputs_model is not BaseModel and cab.outputs_model.model_fields == {}
    bare.add_step("bare", cab)
    assert build_graph(bare).nodes[0].name == "bare"


@pytest.mark.parametrize("model", [dict, "In", 3])
def test_a_model_that_is_not_a_pydantic_model_is_refused_where_it_is_written(model: Any) -> None:
    with pytest.raises(TypeError, match="recipe 'r': the inputs model must be a pydantic"):
        Recipe("r", model)
    with pytest.raises(TypeError, match="cab 'c': the outputs model must be a pydantic"):
        Cab("c", "true", None, model)


def test_an_input_called_name_is_wired_like_any_other() -> None:
    """wsclean's -name: add_step's own name is positional only."""

    class ImagerIn(BaseModel):
        name: str
        step: int = 1

    imager = Cab("imager", "/bin/true", ImagerIn, field_meta={"name": ParamMeta(flag="-name")})
    pipe = Recipe("pipe", In)
    pipe.add_step("image", imager, name=pipe.inputs.target, step=2)
    node = build_graph(pipe).node("image")
    assert node.wiring == {"name": InputRef("target"), "step": 2}


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "the name is empty"),
        (".", "the name is only dots"),
        ("..", "the name is only dots"),
        ("a/b", 'the name holds "/"'),
        ("a\0b", r"the name holds the control character '\x00'"),
        ("a\nb", r"the name holds the control character '\n'"),
        # a terminal reads \x9b as ESC [: the name coloured what followed it
        ("ansi\x9b31m", r"the name holds the control character '\x9b'"),
        ("bidi\u202eoverride", r"the name holds the invisible character '\u202e'"),
        ("a\u2066b", r"the name holds the invisible character '\u2066'"),
        ("zero\u200bwidth", r"the name holds the invisible character '\u200b'"),
        ("\ufeffbom", r"the name holds the invisible character '\ufeff'"),
    ],
)
def test_a_step_name_no_log_file_can_be_named_after_is_refused(name: str, problem: str) -> None:
    with pytest.raises(RecipeGraphError) as info:
        build_graph(recipe(StepRef("a", tool), StepRef(name, tool)))
    message = str(info.value)
    assert message.startswith(f"recipe 'pipe', step {name!r}: {problem}; give the step a name")
    assert "\n" not in message


def test_a_loop_or_loop_body_step_with_an_empty_name_is_refused() -> None:
    looped = Recipe("pipe", In, ToolOut)
    looped.add_loop("", tool, max_iter=2, until="result")
    with pytest.raises(RecipeGraphError, match=r"^recipe 'pipe', loop '': the name is empty"):
        build_graph(looped)
    body = Recipe("body", ToolIn, ToolOut, steps=[StepRef("", tool)])
    looped = Recipe("pipe", In, ToolOut)
    looped.add_loop("cycle", body, max_iter=2, until="result")
    with pytest.raises(
        RecipeGraphError, match=r"^recipe 'pipe', loop 'cycle': body step '': the name is empty"
    ):
        build_graph(looped)


def test_a_nested_recipes_step_names_are_checked_too() -> None:
    inner = recipe(StepRef("..", tool))
    outer = Recipe("outer", In, ToolOut)
    outer.add_step("inner", inner, target=outer.inputs.target)
    with pytest.raises(
        RecipeGraphError, match=r"recipe 'outer.inner', step '..': the name is only"
    ):
        build_graph(outer)


@pytest.mark.parametrize("venv", ["", "  "])
def test_an_empty_venv_is_refused_rather_than_quietly_ignored(venv: str) -> None:
    recipe = Recipe("r")
    recipe.add_step("s", Cab("s", ["/bin/true"]), venv=venv)
    with pytest.raises(RecipeGraphError, match="step 's': venv= is empty"):
        build_graph(recipe)


@pytest.mark.parametrize(
    ("setting", "shown"),
    [("backend", "the reference InputRef(field='target')"), ("venv", "the reference")],
)
def test_a_backend_or_venv_wired_from_an_input_is_refused_by_name(setting: str, shown: str) -> None:
    """Wiring ``backend=r.inputs.backend`` once crashed the run with an internal TypeError."""
    r = Recipe("r", In)
    r.add_step("s", Cab("s", ["/bin/true"]), **{setting: r.inputs.target})
    with pytest.raises(
        RecipeGraphError, match=rf"step 's': {setting}= must be .*{re.escape(shown)}"
    ):
        build_graph(r)


def test_a_backend_that_is_not_text_is_refused() -> None:
    r = Recipe("r")
    r.add_step("s", Cab("s", ["/bin/true"]), backend=5)  # type: ignore[arg-type]
    with pytest.raises(RecipeGraphError, match=r"backend= must be a backend.s name.*not 5"):
        build_graph(r)


class _Named(BaseModel):
    name: str = "x"


class _Made(BaseModel):
    made: Any = None


def test_a_template_naming_no_input_is_refused_where_the_cab_is_declared() -> None:
    """It could never be filled: said at once, with the input it probably means."""
    with pytest.raises(ValueError) as info:
        Cab("touch", "/bin/touch", _Named, _Made, {"made": ParamMeta(implicit="{nmae}.txt")})
    assert str(info.value) == (
        "cab 'touch', 'made': the implicit template '{nmae}.txt' names 'nmae', which is"
        " not an input of the cab; did you mean 'name'?"
    )


@pytest.mark.parametrize(
    ("meta", "said"),
    [
        (ParamMeta(harvest="{nmae}-*.fits"), "the harvest template '{nmae}-*.fits' names 'nmae'"),
        (ParamMeta(implicit="{name"), "the implicit template '{name' is not a template"),
    ],
)
def test_harvest_templates_and_unmatched_braces_are_refused_too(meta: ParamMeta, said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        Cab("touch", "/bin/touch", _Named, _Made, {"made": meta})


def test_templates_may_index_inputs_and_escape_braces() -> None:
    meta = ParamMeta(implicit="{name[0]}-{name.upper}-{{literal}}.txt")
    Cab("touch", "/bin/touch", _Named, _Made, {"made": meta})


def test_a_template_that_cannot_be_filled_says_which_step_and_output(tmp_path: Any) -> None:
    from shinobi.errors import UsageError
    from shinobi.runner import run_recipe

    cab = Cab("touch", "/bin/touch", _Named, _Made, {"made": ParamMeta(implicit="{name[5]}.txt")})
    recipe = Recipe("r")
    recipe.add_step("make", cab)
    with pytest.raises(UsageError) as info:
        run_recipe(recipe, cwd=tmp_path, use_cache=False)
    assert str(info.value) == (
        "recipe 'r', step 'make', output 'made': cannot fill template '{name[5]}.txt':"
        " string index out of range"
    )


def test_a_recipe_that_contains_itself_is_a_graph_error_not_a_recursion() -> None:
    itself = recipe()
    itself.add_step("me", itself)
    with pytest.raises(RecipeGraphError, match=r"step 'me': .*contains it \('pipe' -> 'pipe'\)"):
        build_graph(itself)


def test_two_recipes_that_contain_each_other_are_named_in_their_chain() -> None:
    outer, inner = Recipe("outer", In, ToolOut), Recipe("inner", In, ToolOut)
    outer.add_step("down", inner)
    inner.add_step("up", outer)
    with pytest.raises(RecipeGraphError, match=r"\('outer' -> 'inner' -> 'outer'\)"):
        build_graph(outer)


def test_the_same_recipe_nested_twice_side_by_side_is_fine() -> None:
    inner = Recipe("inner", In, ToolOut)
    inner.add_step("t", tool)
    outer = Recipe("outer", In, ToolOut)
    outer.add_step("one", inner)
    outer.add_step("two", inner)
    assert [n.name for n in build_graph(outer).nodes] == ["one", "two"]


@pytest.mark.parametrize("depth", [1, 2])
def test_a_step_named_like_a_step_inside_a_nested_sibling_is_refused(depth: int) -> None:
    """Both would be ``sub.e`` in results and progress, and share one log file."""
    inner = Recipe("inner", In, ToolOut)
    inner.add_step("e", tool)
    for _ in range(depth - 1):
        wrapped = Recipe("wrap", In, ToolOut)
        wrapped.add_step("in", inner)
        inner = wrapped
    flat = "sub." + "in." * (depth - 1) + "e"
    outer = Recipe("outer", In, ToolOut)
    outer.add_step(flat, tool)
    outer.add_step("sub", inner)
    with pytest.raises(RecipeGraphError, match=rf"step '{re.escape(flat)}': the name is how step"):
        build_graph(outer)


@pytest.mark.parametrize("workers", [0, -2, "2", 2.5, True])
def test_a_recipe_max_workers_that_is_not_a_whole_number_of_one_or_more_is_refused(
    workers: Any,
) -> None:
    with pytest.raises(ValueError, match=r"recipe 'pipe': max_workers must be a whole number"):
        Recipe("pipe", In, ToolOut, max_workers=workers)


class Promised(BaseModel):
    out: str


def test_a_required_recipe_output_that_nothing_sets_is_refused_before_anything_runs() -> None:
    unset = Recipe("pipe", In, Promised)
    unset.add_step("a", tool)
    with pytest.raises(RecipeGraphError, match=r"output 'out': .*nothing sets it; wire it with"):
        build_graph(unset)
    unset.set_output("out", unset.outputs.a.result)
    build_graph(unset)


def test_a_proxy_of_another_recipe_is_refused_naming_both() -> None:
    """``B.add_step("s", tool, src=A.inputs.target)`` (a copy-paste slip) ran with B's
    own value, silently: a reference carried only the field's name."""
    first = Recipe("first", In, ToolOut)
    first.add_step("a", tool, src=first.inputs.target)
    second = Recipe("second", In, ToolOut)
    second.add_step("a", tool, src=first.inputs.target)
    with pytest.raises(RecipeGraphError, match=r"wired to first\.inputs\.target, a reference of"):
        build_graph(second)
    third = Recipe("third", In, ToolOut)
    third.add_step("a", tool)
    third.add_step("b", tool, src=first.outputs.a.result)
    with pytest.raises(RecipeGraphError, match=r"first\.outputs\.a\.result, a reference of"):
        build_graph(third)
    fourth = Recipe("fourth", In, ToolOut)
    fourth.add_step("a", tool)
    fourth.set_output("result", first.outputs.a.result)
    with pytest.raises(RecipeGraphError, match=r"output 'result': it is wired to first\."):
        build_graph(fourth)
    # references made by hand, and each recipe's own, are as before
    own = Recipe("own", In, ToolOut)
    own.add_step("a", tool, src=InputRef("target"))
    own.add_step("b", tool, src=own.outputs.a.result)
    own.set_output("result", own.outputs.b.result)
    assert [n.deps for n in build_graph(own).nodes] == [(), (0,)]


def test_a_proxy_of_another_recipe_of_the_same_name_is_refused() -> None:
    """Two recipes a factory made alike, ``A`` wired to ``B.outputs.s.make``: the check
    compared names only, and ``A`` silently took its own ``s``'s output."""

    def made() -> Recipe:
        recipe = Recipe("cyc", In, ToolOut)
        recipe.add_step("s", tool, src=recipe.inputs.target)
        return recipe

    first, second = made(), made()
    first.add_step("t", tool, src=second.outputs.s.result)
    with pytest.raises(RecipeGraphError, match=r"a reference of another recipe named so"):
        build_graph(first)
    first.steps.pop()
    first.add_step("t", tool, src=first.outputs.s.result)
    build_graph(first)


class Needs(BaseModel):
    result: File
    count: int


class Named(BaseModel):
    prefix: str = "img"


class Takes(BaseModel):
    result: File


def test_a_cab_step_with_a_required_output_nothing_fills_is_refused() -> None:
    """It failed every run after the tool ran, with pydantic's "not a valid path (got None)"."""
    bare = Recipe("r")
    bare.add_step("make", Cab("maker", "maker", Named, Needs))
    with pytest.raises(RecipeGraphError) as caught:
        build_graph(bare)
    assert str(caught.value) == (
        "recipe 'r', step 'make': nothing fills the required output 'result' of cab 'maker';"
        " give it a path input 'result' of the same name (a passthrough), ParamMeta(implicit=...)"
        " or ParamMeta(harvest=...), a wrangler with output='result', or a default"
    )
    half = Recipe("r")
    half.add_step(
        "make", Cab("maker", "maker", Named, Needs, {"result": ParamMeta(implicit="{prefix}")})
    )
    with pytest.raises(RecipeGraphError, match="required output 'count' of cab 'maker'; give it"):
        build_graph(half)


def test_every_way_of_filling_a_required_output_is_accepted() -> None:
    import shinobi

    fillers = [
        Cab("t", "t", Takes, Takes, {"result": ParamMeta(positional=True)}),  # passthrough
        Cab("t", "t", Named, Takes, {"result": ParamMeta(implicit="{prefix}.fits")}),
        Cab("t", "t", Named, Takes, {"result": ParamMeta(harvest="*.fits")}),
        Cab(
            "t",
            "t",
            Named,
            Takes,
            wranglers=[shinobi.Wrangler(r"(\S+)", "output", output="result")],
        ),
    ]
    for number, cab in enumerate(fillers):
        ok = Recipe("r")
        ok.add_step("s", cab, **({"result": f"x{number}"} if number == 0 else {}))
        build_graph(ok)


def test_an_orchestration_function_may_fill_what_its_cab_cannot() -> None:
    """Its own StepResult may carry the output; the graph leaves that to the run."""
    import shinobi

    @shinobi.step(Cab("maker", "maker", Named, Takes))
    def made(ctx: Any) -> Any:
        return ctx.run()

    ok = Recipe("r")
    ok.add_step("make", made)
    build_graph(ok)


def test_ctx_run_of_a_cab_nothing_fills_says_so(tmp_path: Any) -> None:
    """It failed with pydantic's "Input is not a valid path (got None)"."""
    import shinobi
    from shinobi.config import load_config
    from shinobi.runner import run_recipe

    @shinobi.step(Cab("maker", ["true"], Named, Takes))
    def made(ctx: Any) -> Any:
        return ctx.run()

    recipe = Recipe("r")
    recipe.add_step("make", made)
    result = run_recipe(recipe, cwd=tmp_path, config=load_config({"cache.enabled": False}))
    (step,) = result.steps
    assert step.status == "failed" and step.error is not None
    assert step.error.startswith("nothing fills the required output 'result' of cab 'maker';")
    assert step.error.endswith("or have the function return a result that gives it")


class MaybeNote(BaseModel):
    note: File | None  # required, but None fills it


def test_an_output_none_can_fill_is_not_refused() -> None:
    """``Optional[File]`` with no default: the run fills it with None, as it always did."""
    ok = Recipe("r")
    ok.add_step("check", Cab("check", ["true"], Named, MaybeNote))
    build_graph(ok)


class Many(BaseModel):
    srcs: list[str] = ["a", "b"]


def _nested(scatter_inner: bool, inner_name: str = "e") -> Recipe:
    inner = Recipe("inner", Many, ToolOut)
    if scatter_inner:
        inner.add_step(inner_name, tool, scatter=["src"], src=inner.inputs.srcs)
    else:
        inner.add_step(inner_name, tool)
    return inner


@pytest.mark.parametrize(
    ("build", "step", "numbered"),
    [
        # a flat step named like a slice of a step inside a nested recipe
        (
            lambda o: (o.add_step("s.e[0]", tool), o.add_step("s", _nested(True))),
            "s.e[0]",
            "s.e[N]",
        ),
        (
            lambda o: (o.add_step("s", _nested(True)), o.add_step("s.e[7]", tool)),
            "s.e[7]",
            "s.e[N]",
        ),
        # a flat step named like a step inside a slice of a scattered nested recipe
        (
            lambda o: (
                o.add_step("s[0].e", tool),
                o.add_step("s", _nested(False), scatter=["srcs"], srcs=[["a"], ["b"]]),
            ),
            "s[0].e",
            "s[N].e",
        ),
        # a nested recipe's step named like a slice of a flat scattered sibling
        (
            lambda o: (
                o.add_step("n", _nested(False, "x[0]")),
                o.add_step("n.x", tool, scatter=["src"], src=["a", "b"]),
            ),
            "n.x[0]",
            "n.x[N]",
        ),
    ],
)
def test_a_step_named_like_a_run_of_a_scattered_step_at_any_depth_is_refused(
    build: Any, step: str, numbered: str
) -> None:
    """Each pair shared one log file and one name in the results: the sibling
    checks saw one level only."""
    outer = Recipe("outer", In, ToolOut)
    build(outer)
    with pytest.raises(RecipeGraphError) as info:
        build_graph(outer)
    assert str(info.value) == (
        f"recipe 'outer', step {step!r}: the name is how the runs of a scattered step are named"
        f" ({numbered}), so the two would share one log file and one name in the results;"
        " give the step another name"
    )


def test_names_that_only_look_alike_are_no_clash() -> None:
    outer = Recipe("outer", In, ToolOut)
    outer.add_step("s.e[0]", tool)  # s has a step e, but does not scatter it
    outer.add_step("s", _nested(False))
    outer.add_step("t.e[0]", tool)  # t scatters e, but is no step of this recipe
    outer.add_step("u", _nested(True), srcs=["a"])
    outer.add_step("u.e[x]", tool)  # no number
    build_graph(outer)


def test_a_copied_or_renamed_recipe_keeps_its_own_wiring() -> None:
    """A copy (copy.deepcopy, or the pickle a process pool sends) and a recipe renamed
    after it was wired were refused as wired to "another recipe named so"."""
    import copy
    import pickle

    original = Recipe("pipe", In, ToolOut)
    original.add_step("t", tool, src=original.inputs.target)
    original.set_output("result", original.outputs.t.result)
    for made in (
        copy.deepcopy(original),
        copy.copy(original),
        pickle.loads(pickle.dumps(original)),
    ):
        assert [n.name for n in build_graph(made).nodes] == ["t"]
    original.name = "variant1"
    build_graph(original)
    other = Recipe("pipe", In, ToolOut)  # alike, by name, but another recipe
    other.add_step("t", tool, src=original.inputs.target)
    with pytest.raises(RecipeGraphError, match="a reference of another recipe"):
        build_graph(other)


def test_what_is_no_recipe_or_no_step_is_one_clear_error() -> None:
    """``build_graph(cab)`` and ``add_step("s", Cab)`` (the class) ended in a bare
    AttributeError deep in the graph."""
    for given in (tool, None):
        with pytest.raises(TypeError, match="build_graph takes a Recipe, not"):
            build_graph(given)  # type: ignore[arg-type]
    classy = Recipe("r")
    classy.add_step("s", Cab)
    with pytest.raises(RecipeGraphError, match=r"step 's': Cab is the class itself; give the"):
        build_graph(classy)
