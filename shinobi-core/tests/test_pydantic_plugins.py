"""``ninja`` keeps pydantic from scanning for its plugins, unless told to let it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from shinobi.cli import pydantic_plugins

RECIPE = """
    from pydantic import BaseModel

    from shinobi.steps import Cab

    class Empty(BaseModel):
        pass

    true = Cab(name="true", command="true", inputs_model=Empty, outputs_model=Empty)
"""


def _installed_plugin(site: Path) -> None:
    """A distribution registering a pydantic plugin that leaves a mark when loaded."""
    info = site / "markplug-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: markplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nmark = markplug:plugin\n")
    (site / "markplug.py").write_text(
        textwrap.dedent(
            """
            import os
            from pathlib import Path

            class _Plugin:
                def new_schema_validator(self, *args, **kwargs):
                    Path(os.environ["MARKPLUG_FILE"]).write_text("validated")
                    return None, None, None

            Path(os.environ["MARKPLUG_FILE"]).write_text("loaded")
            plugin = _Plugin()
            """
        )
    )


@pytest.mark.parametrize(("opt_in", "marked"), [(None, False), ("1", True)])
def test_ninja_loads_pydantic_plugins_only_when_asked(
    ninja: Callable[..., subprocess.CompletedProcess[str]],
    recipe_file: Callable[[str], Path],
    tmp_path: Path,
    opt_in: str | None,
    marked: bool,
) -> None:
    site = tmp_path / "site"
    _installed_plugin(site)
    recipe = recipe_file(RECIPE)
    mark = tmp_path / "mark.txt"
    env = {"PYTHONPATH": str(site), "MARKPLUG_FILE": str(mark)}
    if opt_in is not None:
        env[pydantic_plugins.OPT_IN] = opt_in
    proc = ninja("run", f"{recipe}:true", env=env)
    assert proc.returncode == 0, proc.stderr
    assert mark.exists() is marked
    if marked:  # loaded, and asked about a model's validator as pydantic does
        assert mark.read_text() == "validated"


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    prelude = "from shinobi.cli.pydantic_plugins import skip_discovery\nskip_discovery()\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )


def test_models_validate_without_the_scan_and_without_importlib_metadata() -> None:
    proc = _fresh(
        """
        import sys
        from pydantic import BaseModel

        class Model(BaseModel):
            count: int

        assert Model.model_validate({"count": "3"}).count == 3
        print("METADATA", "importlib.metadata" in sys.modules)
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert "METADATA False" in proc.stdout


def test_the_stand_in_forwards_what_it_does_not_answer_to_pydantic_s_own_loader() -> None:
    """A pydantic that asks its loader module for more than ``get_plugins`` gets it."""
    proc = _fresh(
        """
        import pydantic.plugin._loader as loader

        print("PLUGINS", tuple(loader.get_plugins()))
        print("GROUP", loader.PYDANTIC_ENTRY_POINT_GROUP)
        try:
            loader.no_such_name
        except AttributeError:
            print("MISSING refused")
        """
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["PLUGINS ()", "GROUP pydantic", "MISSING refused"]


def test_a_loader_already_imported_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic.plugin._loader as loader

    monkeypatch.delenv(pydantic_plugins.OPT_IN, raising=False)
    pydantic_plugins.skip_discovery()
    assert sys.modules[pydantic_plugins.LOADER] is loader
