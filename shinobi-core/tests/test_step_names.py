"""Run-time step names onto graph nodes: slices, and steps of a scattered recipe's slices."""

from __future__ import annotations

import pytest

from shinobi.step_names import in_slice_of, scattered_step, unsliced


@pytest.mark.parametrize(
    ("name", "node"),
    [("image[3]", "image"), ("ns[2].first", "ns.first"), ("a[0].b[1].s[4]", "a.b.s"), ("x", "x")],
)
def test_a_run_time_name_without_its_slices_is_its_node(name: str, node: str) -> None:
    assert unsliced(name) == node


@pytest.mark.parametrize(
    ("name", "dep", "met"),
    [
        ("ns[1].second", "ns.first", "ns[1].first"),  # the same slice of the same recipe
        ("a[0].b[0].s", "a.u", "a[0].u"),  # a step one recipe up, in the outer slice
        ("a[0].b[0].s", "a.b.r", "a[0].b[0].r"),
        ("a[0].b.s", "a.b.r", "a[0].b.r"),  # b itself not scattered
        ("ns[1].second", "before", "before"),  # a step outside the scattered recipe
        ("plain.s", "plain.r", "plain.r"),
    ],
)
def test_a_dependency_is_named_as_the_step_meets_it(name: str, dep: str, met: str) -> None:
    assert in_slice_of(name, dep) == met


@pytest.mark.parametrize(
    ("name", "step"),
    [("image[3]", "image"), ("a[0].s[1]", "a[0].s"), ("a[0].s", "a[0].s"), ("x", "x")],
)
def test_a_slice_belongs_to_its_scattered_step(name: str, step: str) -> None:
    assert scattered_step(name) == step
