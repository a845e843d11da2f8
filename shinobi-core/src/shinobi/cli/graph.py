"""``ninja graph FILE.py:NAME``: the declared graph as text, dot, mermaid or json."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from shinobi.cli import collector
from shinobi.cli.machine_output import MachineOutputCommand, emit
from shinobi.cli.recipe_options import RecipeCommand, recipe_values

__all__ = ["command"]


class _GraphCommand(MachineOutputCommand, RecipeCommand):
    """stdout carries the graph alone, in every format (the module's prints go to
    stderr): dot and mermaid are read by programs, and so may the text be."""

    needs_inputs = False  # the graph is the recipe's, whatever its inputs

    def prints_for_machines(self, args: Sequence[str]) -> bool:
        return True


@click.command(
    cls=_GraphCommand, short_help="Print a recipe's graph as text, dot, mermaid or json."
)
@click.argument("target", metavar="FILE.py:NAME")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "dot", "mermaid", "json"]),
    default="text",
    show_default=True,
    help="text for people, dot for Graphviz, mermaid for Markdown, json for tools.",
)
@click.pass_context
def command(ctx: click.Context, target: str, fmt: str, **params: Any) -> None:
    """Print the graph of the recipe NAME in FILE.py; nothing runs."""
    from shinobi.graph import build_graph
    from shinobi.render.formats import render_graph
    from shinobi.runner import as_recipe

    recipe, values = recipe_values(ctx, params)
    if values:  # accepted so a run's command line can be drawn as it is, but unused
        click.echo(
            f"ninja: warning: the graph is the one the recipe declares; the input(s) given"
            f" ({', '.join(values)}) do not change it (`ninja run {target} ... --dryrun`"
            " shows what a run with them would do)",
            err=True,
        )
    recipe = as_recipe(recipe)
    with collector.building(last=True):
        emit(render_graph(build_graph(recipe), fmt))
