"""The keys a container backend reads, and refusing wrong ones in one line."""

from __future__ import annotations

import pytest

from shinobi_containers.errors import SettingsInvalid
from shinobi_containers.settings import ContainerSettings


def test_defaults() -> None:
    options = ContainerSettings.from_mapping("docker", {})
    assert options.binary == "docker" and options.run_as_host_user and options.init
    assert options.enforce_resources == "auto" and not options.pin_image
    assert options.network is None and options.run_flags == ()


def test_run_flags_may_be_a_string_or_a_list() -> None:
    assert ContainerSettings.from_mapping("docker", {"run_flags": "--network none"}).run_flags == (
        "--network",
        "none",
    )
    assert ContainerSettings.from_mapping("podman", {"run_flags": ["--gpus", "all"]}).run_flags == (
        "--gpus",
        "all",
    )


def test_unrelated_keys_are_ignored() -> None:
    ContainerSettings.from_mapping("docker", {"default": "native", "venv": None, "kubernetes": {}})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("enforce_resources", "sometimes", '"auto", "always" or "never"'),
        ("run_as_host_user", "maybe", "true or false"),
        ("run_flags", 3, "a list of strings"),
        ("network", "", "a non-empty string"),
    ],
)
def test_a_wrong_value_is_refused_naming_the_key(key: str, value: object, expected: str) -> None:
    with pytest.raises(SettingsInvalid) as info:
        ContainerSettings.from_mapping("podman", {key: value})
    message = str(info.value)
    assert f"backend.podman.{key}" in message and expected in message and "\n" not in message


def test_run_flags_with_an_unbalanced_quote_are_refused_by_name() -> None:
    with pytest.raises(SettingsInvalid, match=r"backend\.docker\.run_flags must be words"):
        ContainerSettings.from_mapping("docker", {"run_flags": '--shm-size "2g'})


@pytest.mark.parametrize(
    "flags",
    [["--name", "mine"], ["--name=mine"], "-d", ["--detach"], "-td", ["-it", "-dit"], "-Pd"],
)
def test_run_flags_that_take_the_container_from_ninja_are_refused(flags: object) -> None:
    """A container named otherwise is one ninja cannot stop or remove on an interrupt."""
    with pytest.raises(
        SettingsInvalid, match=r"backend\.docker\.run_flags sets (--name|-[ditP]+|--detach)"
    ):
        ContainerSettings.from_mapping("docker", {"run_flags": flags})
    ContainerSettings.from_mapping("docker", {"run_flags": ["--network", "none", "-it"]})
    ContainerSettings.from_mapping("docker", {"run_flags": ["-edummy=1"]})  # -e's value


def test_run_flags_with_rm_are_refused_it_hid_an_out_of_memory_kill() -> None:
    """The engine removed the container before ninja read its OOM flag: exit 0."""
    for flags in (["--rm"], "--rm=true"):
        with pytest.raises(SettingsInvalid, match=r"sets --rm, .* an out-of-memory kill goes"):
            ContainerSettings.from_mapping("podman", {"run_flags": flags})
