"""A secret in a list or a model input is masked in the manifest's ``command``, as in ``inputs``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, SecretStr

import shinobi
from shinobi.runner import run_recipe
from shinobi.steps import Cab, ParamMeta, Recipe


class Creds(BaseModel):
    user: str
    password: SecretStr


@shinobi.pystep
def login(creds: Creds, extra: list[SecretStr]) -> str:
    """Hands back whether it got the real values (the tool must still get them)."""
    got = [creds.password.get_secret_value(), *(e.get_secret_value() for e in extra)]
    return "real" if got == ['hun"ter2xyz', "listS3cret", "two2222"] else "masked"


class EchoIn(BaseModel):
    extra: list[SecretStr] = []


class RIn(BaseModel):
    creds: Creds
    extra: list[SecretStr] = []
    vault: dict[str, SecretStr] = {}


class ROut(BaseModel):
    got: str | None = None


echo = Cab("echo", "echo", EchoIn, BaseModel, {"extra": ParamMeta(positional=True)})


def test_secrets_in_a_list_a_model_and_a_mapping_are_masked_in_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recipe = Recipe("sec2", RIn, ROut)
    recipe.add_step("l", login, creds=recipe.inputs.creds, extra=recipe.inputs.extra)
    recipe.add_step("e", echo, extra=recipe.inputs.extra)
    recipe.set_output("got", recipe.outputs.l.result)
    creds = json.dumps({"user": "me", "password": 'hun"ter2xyz'})
    argv = ["ninja", "run", "r.py:sec2", "--creds", creds, "--extra", "listS3cret"]
    argv += ["--extra=two2222", "--vault", '{"k": "vaultS3cret"}']
    monkeypatch.setattr(sys, "argv", argv)
    inputs = {
        "creds": {"user": "me", "password": 'hun"ter2xyz'},
        "extra": ["listS3cret", "two2222"],
        "vault": {"k": "vaultS3cret"},
    }
    result = run_recipe(recipe, inputs, cwd=tmp_path, provenance=True)
    assert result.outputs["got"] == "real"
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    text = manifest.read_text()
    for secret in ("ter2xyz", "listS3cret", "two2222", "vaultS3cret"):
        assert secret not in text
    command = json.loads(text)["command"]
    assert command[4] == '{"user": "me", "password": "**********"}'
    assert command[5:] == [
        "--extra",
        "**********",
        "--extra=**********",
        "--vault",
        '{"k": "**********"}',
    ]
    (echoed,) = (tmp_path / ".shinobi" / "runs").glob("*/logs/e.out")
    assert echoed.read_text() == "listS3cret two2222\n"  # the tool got the values


@pytest.mark.parametrize(
    "given",
    [
        '{"user": "me", "password": "AbC\\/dEf+SEKRIT=="}',  # PHP's json_encode: \/ for /
        '{"user": "me", "password": "TOP\\u0053ECRET8"}',  # an escape for a plain letter
        '{"user": "me", "password": "AbC/dEf\\u002BSEKRIT=="}',  # .NET's: \u002B for +
    ],
)
def test_a_secret_json_spells_with_other_escapes_is_masked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """Only the spellings json.dumps writes were masked: the same token written with
    other escapes sat in the manifest's ``command`` as typed."""
    creds = json.loads(given)
    recipe = Recipe("sec3", RIn, ROut)
    recipe.add_step("l", login, creds=recipe.inputs.creds, extra=recipe.inputs.extra)
    recipe.set_output("got", recipe.outputs.l.result)
    monkeypatch.setattr(sys, "argv", ["ninja", "run", "r.py:sec3", "--creds", given])
    run_recipe(recipe, {"creds": creds}, cwd=tmp_path, provenance=True)
    (manifest,) = (tmp_path / ".shinobi" / "runs").glob("*/manifest.json")
    command = json.loads(manifest.read_text())["command"]
    assert command[-2:] == ["--creds", "**********"]
