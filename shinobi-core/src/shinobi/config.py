"""Configuration: defaults < user file < project file < SHINOBI_* environment < CLI flags.

Every effective value remembers where it came from, because "why is this
running on docker?" is a question best answered by ``ninja config show``.

Files are TOML. The user file lives in the platform's config directory
(``~/.config/shinobi/config.toml`` on Linux; ``SHINOBI_CONFIG`` overrides the
path); the project file is ``shinobi.toml`` in the working directory.
Environment variables are ``SHINOBI_<SECTION>_<KEY>``, e.g.
``SHINOBI_EXECUTION_MAX_WORKERS=4``.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from shinobi.errors import ConfigError, did_you_mean

__all__ = [
    "AppConfig",
    "BackendConfig",
    "CacheConfig",
    "ExecutionConfig",
    "ProvenanceConfig",
    "config_bool",
    "load_config",
    "named_file_missing",
    "not_blank_dir",
    "project_config_path",
    "said_where",
    "user_config_path",
    "user_dir",
]

DEFAULT_ENV_ALLOW = [
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "TZ",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "SLURM_JOB_ID",
    "SLURM_CLUSTER_NAME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
]


class _Section(BaseModel):
    # defer_build: see _defaults(); a section's validator is built when first used.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _not_a_boolean_for_a_number(cls, value: object, info: ValidationInfo) -> object:
        """Refuse true/false for a number, which pydantic's lax mode reads as 1 and 0.

        ``max_workers = true`` ran one worker and ``SHINOBI_EXECUTION_GRACE_PERIOD=false``
        (a variable's value is read as JSON) killed steps with no grace at all,
        silently; such a value is a key set to the wrong thing, not a number.
        """
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields.get(info.field_name)
            if field is not None and _a_number(field.annotation):
                raise ValueError(f"{str(value).lower()} is not a number; write a number")
        return value


def _kinds(annotation: Any) -> set[Any]:
    """The types a field of this type may hold: a union's members, or the type."""
    import types
    import typing

    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    return set(typing.get_args(annotation) if union else (annotation,))


def _a_number(annotation: Any) -> bool:
    """Whether a field of this type holds a number (an int or a float, not a bool)."""
    kinds = _kinds(annotation)
    return bool({int, float} & kinds) and bool not in kinds


class ExecutionConfig(_Section):
    max_workers: int = Field(1, ge=1, description="steps run at once, per recipe")
    grace_period: float = Field(
        10.0,
        ge=0,
        allow_inf_nan=False,  # an endless grace would leave a stuck step's stop to a 2nd signal
        description="seconds between SIGTERM and SIGKILL when stopping a step",
    )
    clear_stale_outputs: bool = Field(
        True, description="check for live writers before a step rewrites an existing output"
    )
    enforce_resources: Literal["auto", "always", "never"] = Field(
        "auto", description="which declared limits container backends pass to the runtime"
    )
    cpus: float | None = Field(
        None,
        gt=0,
        allow_inf_nan=False,
        description="CPUs the run's budget may hand out; default: what this process may use",
    )
    memory: str | int | None = Field(
        None, description="memory the run's budget may hand out (e.g. '64GiB'); default: detected"
    )
    workdir: str | None = Field(
        None, description="where .shinobi/ (runs, launches) is kept; default: the cwd"
    )

    def workdir_path(self) -> Path | None:
        """``workdir`` as a directory that exists, or None when it is not set.

        Checked where it is used, not when the file is read (``ninja config
        show`` on another machine is fine): a typo must not scatter run
        records into a tree ninja made up, as ``--workdir`` would not either.
        """
        if not self.workdir:
            return None
        path = Path(self.workdir).expanduser()
        if not path.is_dir():
            said = "is not a directory" if path.exists() else "does not exist"
            raise ConfigError(
                f"execution.workdir is {self.workdir!r}, which {said}; create it or fix the"
                " setting (`ninja config show` says where it is set)"
            )
        return path.resolve()

    @field_validator("workdir")
    @classmethod
    def _workdir_not_blank(cls, value: str | None) -> str | None:
        # "" (SHINOBI_EXECUTION_WORKDIR=$UNSET in a job script) was the cwd, wherever the job ran
        return _with_variables(
            not_blank_dir(value, "unset it to keep .shinobi/ in the current directory")
        )

    @field_validator("memory", mode="before")
    @classmethod
    def _a_size(cls, value: object) -> str | int | None:
        """A size the budget can read ("64GiB", 68719476736), refused here, not mid-run.

        Checked before pydantic's own union, which would take ``true`` as one
        byte and answer ``1.5`` with a message about strings.
        """
        if value is None:
            return None
        from shinobi.resources import parse_size, refuse_unitless

        if not isinstance(value, int | float | str):
            raise ValueError(f"not a size: {value!r} (write e.g. '64GiB' or a number of bytes)")
        size = parse_size(value)  # raises ValueError with the accepted forms
        if size == 0:
            raise ValueError("a run's memory budget must be more than 0 bytes")
        refuse_unitless(size, "a run's memory budget", value)  # `memory = 64` meant gigabytes
        return value if isinstance(value, str) else size


class BackendConfig(BaseModel):
    """Global backend keys; ``[backend.NAME]`` tables hold one backend's own keys.

    A table's keys belong to its backend, which says which it reads
    (``Backend.settings_keys``); they are checked when the backend is loaded.
    Anything else that is not a table is a misspelt global key, refused by
    :func:`load_config`.
    """

    model_config = ConfigDict(extra="allow", defer_build=True)  # see _defaults()

    default: str = Field("native", description="backend for steps that name none")
    venv: str | None = Field(None, description="virtualenv used by the venv backend")
    # A default, not ``default_factory=list``: pydantic reads a factory's
    # signature, and the builtin's costs ~3 ms of every command's start-up (it
    # compiles the tokenizer's pattern). Pydantic copies the list per instance.
    venv_host_commands: list[str] = Field(
        [],
        description="bare commands a venv step may take from the host's PATH",
    )
    run_as_host_user: bool = Field(
        True, description="docker/podman run as the invoking user, so outputs are yours"
    )

    @field_validator("venv")
    @classmethod
    def _venv_not_blank(cls, value: str | None) -> str | None:
        # "" ran venv steps natively, with a warning only once they were planned
        return _with_variables(not_blank_dir(value, "unset it (a step names its own with venv=)"))


class ProvenanceConfig(_Section):
    enabled: bool = Field(False, description="write a run manifest for every run")
    env_allow: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENV_ALLOW),
        description="environment variables recorded in manifests (never the rest)",
    )

    @field_validator("env_allow")
    @classmethod
    def _not_everything(cls, value: list[str]) -> list[str]:
        # "*" recorded the whole environment, tokens and passwords with it
        for pattern in value:
            if pattern and not pattern.strip("*?"):
                raise ValueError(
                    f"the pattern {pattern!r} names every variable, so manifests would record"
                    " the whole environment, secrets included; name the variables, or"
                    " patterns of them (SLURM_*)"
                )
        return value


class CacheConfig(_Section):
    enabled: bool = Field(True, description="reuse results of identical steps")
    dir: str | None = Field(None, description="cache directory (shared filesystems work)")

    @field_validator("dir")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        # "" would quietly mean the default location while `config show` said ""
        return _with_variables(not_blank_dir(value, "unset it for the default location"))


def config_bool(value: object) -> bool:
    """``value`` read as a yes/no setting, as the global keys read theirs.

    ``SHINOBI_CACHE_ENABLED=0`` and ``run_as_host_user = "yes"`` are read by
    pydantic's rules (true/false, 1/0, yes/no, on/off, ...); a plugin's table
    reads its own switches with this, so one word means the same in every layer
    and key. ValueError, saying what is accepted, for anything else.
    """
    if isinstance(value, bool):
        return value
    from pydantic import TypeAdapter

    try:
        return TypeAdapter(bool).validate_python(value)
    except ValidationError:
        raise ValueError(_NOT_A_SWITCH.format(value=value)) from None


#: What a yes/no setting says of a value it cannot read, in every layer and table.
_NOT_A_SWITCH = "must be true or false (or yes/no, on/off, 1/0), not {value!r}"


#: ``$NAME`` or ``${NAME}`` in a path setting (compiled by ``re`` when a path is set).
_VARIABLE = r"\$(\w+|\{\w+\})"


def _with_variables(value: str | None) -> str | None:
    """``value``, a path setting, with its ``$VARIABLES`` expanded, as its ``~`` is.

    ``dir = "$SCRATCH/shinobi-cache"`` was taken word for word: a directory named
    ``$SCRATCH`` appeared in the project. A variable that is not set (or is empty)
    is refused, not left in the path, nor read as nothing, which made
    ``$SCRATCH/cache`` the root's ``/cache``.
    """
    if value is None:
        return value
    if value.startswith("~"):  # expanded here, so `config show` says the path it uses
        value = os.path.expanduser(value)
    if "$" not in value:
        return value
    for found in re.finditer(_VARIABLE, value):
        name = found.group(1).strip("{}")
        if not os.environ.get(name):
            said = "is empty" if name in os.environ else "is not set"
            raise ValueError(f"${name} {said} here; set it, or write the path in full")
    return os.path.expandvars(value)


def not_blank_dir(value: str | None, instead: str) -> str | None:
    """``value``, a directory's name, unless it is blank: ValueError saying so, and
    ``instead`` (what to do when no directory is meant). A blank name is an unset
    shell variable, and as a path it is the current directory, which nobody meant."""
    if value is not None and not value.strip():
        raise ValueError(f"is empty; name a directory, or {instead}")
    return value


class AppConfig(_Section):
    execution: ExecutionConfig = Field(default_factory=ExecutionConfig)
    backend: BackendConfig = Field(default_factory=BackendConfig)
    provenance: ProvenanceConfig = Field(default_factory=ProvenanceConfig)
    cache: CacheConfig = Field(default_factory=CacheConfig)

    sources: dict[str, str] = Field(default_factory=dict, exclude=True)

    def backend_settings(self, name: str) -> dict[str, Any]:
        """The global backend keys with the ``[backend.NAME]`` table over them."""
        data = self.backend.model_dump()
        # Only a table is the backend's own: `backend.venv` (a path) is a global key.
        table = data.pop(name) if isinstance(data.get(name), dict) else None
        merged = {k: v for k, v in data.items() if not isinstance(v, dict)}
        merged["enforce_resources"] = self.execution.enforce_resources
        merged["pin_image"] = self.provenance.enabled
        if isinstance(table, dict):
            merged.update(table)
        return merged

    def check_backend_table(self, name: str, known: Iterable[str] | None) -> None:
        """Refuse a key of ``[backend.NAME]`` that backend ``name`` does not read.

        ``known`` is what the backend declares it reads; None checks nothing (a
        plugin that does not say).
        """
        table = self.backend.model_extra.get(name) if self.backend.model_extra else None
        if known is None or not isinstance(table, dict):
            return
        allowed = set(known)
        for key in table:
            if key not in allowed:
                # a table's value (env = {...}) was recorded by its keys: found by prefix
                source = _origin(["backend", name, key], self.sources)
                listing = ", ".join(sorted(allowed)) or "none"
                raise ConfigError(
                    f"configuration key 'backend.{name}.{key}' (from {source}) is not a setting"
                    f" of the {name} backend{did_you_mean(key, allowed)} (its settings: {listing})"
                )

    def cache_dir(self) -> Path:
        if self.cache.dir:
            return Path(self.cache.dir).expanduser()
        return user_dir("cache", "set cache.dir (SHINOBI_CACHE_DIR)") / "steps"

    def effective(self) -> list[tuple[str, Any, str]]:
        """(dotted key, value, source) for every setting, for ``ninja config show``."""
        rows: list[tuple[str, Any, str]] = []
        for key, value in sorted(_flatten(self.model_dump()).items()):
            rows.append((key, value, self.sources.get(key, "default")))
        return rows


def user_dir(kind: str, instead: str) -> Path:
    """shinobi's per-user ``kind`` directory (``config``, ``cache``, ``state``).

    With no ``HOME`` and no passwd entry for this uid (a container run as
    ``--user 12345``, ``env -i``) platformdirs cannot tell where that is, and
    raised a RuntimeError every command reported as a bug of ninja's.
    ``instead``: the setting that names the place without a home.
    """
    import platformdirs

    try:
        return Path(getattr(platformdirs, f"user_{kind}_dir")("shinobi"))
    except RuntimeError:
        raise ConfigError(
            f"cannot tell where this user's {kind} files go: HOME is not set and uid"
            f" {os.getuid()} has no home directory; set HOME (or XDG_{kind.upper()}_HOME),"
            f" or {instead}"
        ) from None


def user_config_path() -> Path:
    explicit = os.environ.get("SHINOBI_CONFIG")
    if explicit and explicit.strip():  # absolute: `config show` names it wherever it is run from
        return Path(explicit).expanduser().absolute()
    return user_dir("config", "name a configuration file in SHINOBI_CONFIG") / "config.toml"


def named_file_missing() -> str | None:
    """What to say when ``SHINOBI_CONFIG`` names a file that does not exist: a typo,
    or a site file not there on this host, whose settings every command would go
    without, unseen. None when it names one (or is not set).

    Set but empty (``SHINOBI_CONFIG=$SITE_CONFIG`` in a job script, the site
    variable unset), the user's own file is read in its place: said too.
    """
    named = os.environ.get("SHINOBI_CONFIG")
    if named is not None and not named.strip():
        return (
            f"SHINOBI_CONFIG is set but empty (an unset variable in a job script?), so"
            f" {user_config_path()} is read in its place; name a file, or unset it"
        )
    if not named or os.path.lexists(user_config_path()):  # a dangling link is refused
        return None
    return (
        f"SHINOBI_CONFIG names {named}, which does not exist: its settings are not applied;"
        " fix the path, or unset SHINOBI_CONFIG"
    )


def project_config_path(cwd: Path | None = None) -> Path:
    return (cwd or Path.cwd()) / "shinobi.toml"


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flatten(value, f"{dotted}."))
        else:
            flat[dotted] = value
    return flat


def _has_keys_under(flat: Mapping[str, Any], key: str) -> bool:
    """Whether ``flat`` (dotted keys) sets anything inside the table ``key``."""
    inside = f"{key}."
    return any(k.startswith(inside) for k in flat)


def _nested_either_way(keys: Iterable[str], key: str) -> list[str]:
    """The dotted ``keys`` inside the table ``key``, or holding ``key`` in theirs:
    the ones ``key`` cannot stand beside, as a value and a table in one place."""
    return [k for k in keys if k.startswith(f"{key}.") or key.startswith(f"{k}.")]


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        parts = dotted.split(".")
        node = nested
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return nested


def _read_toml(path: Path, instead: str) -> dict[str, Any]:
    """The table in ``path``; {} if there is no such file or it is empty (the
    usual cases, and ``SHINOBI_CONFIG=/dev/null``, which need no TOML parser).
    ``instead``: how to do without this file, for when it cannot be read."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # nothing there, or not to be seen: opening it says which
        mode = stat.S_IFREG
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) and not os.path.samefile(path, os.devnull):
        from shinobi.file_kinds import kind_of

        raise ConfigError(_not_a_file(path, instead, kind_of(mode)))
    try:
        fh = path.open("rb")
    except NotADirectoryError:  # HOME=/dev/null: no file can be there
        return {}
    except FileNotFoundError:
        link = _link_to_nothing_on_the_way(path)
        if link is None:
            return {}
        from shinobi.local_runs import dangling_link

        which = "" if link == path else f"{link}: "
        raise ConfigError(
            f"{path}: cannot read this configuration file: {which}{dangling_link(link)};"
            f" or {instead}"
        ) from None
    except IsADirectoryError:
        raise ConfigError(_not_a_file(path, instead)) from None
    except OSError as exc:  # another user's HOME, a dangling mount
        raise ConfigError(
            f"{path}: cannot read this configuration file ({exc.strerror}); fix its"
            f" permissions, or {instead}"
        ) from None
    with fh:
        try:
            empty = not fh.peek(1)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read this configuration file ({exc})") from None
        if empty:
            return {}
        import tomllib

        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc}); fix or remove the file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read this configuration file ({exc})") from None


def _link_to_nothing_on_the_way(path: Path) -> Path | None:
    """``path``, or a directory above it, when it is a symbolic link to nothing: a
    shared configuration on an unmounted filesystem is no file to read, not no file."""
    for each in (path, *path.parents):
        if each.is_symlink() and not each.exists():
            return each
    return None


def _file_layer(path: Path, instead: str) -> dict[str, Any]:
    """The dotted keys of the configuration file ``path`` (see :func:`_read_toml`),
    a relative ``cache.dir`` among them taken from the file's own directory.

    Left relative, a site or user file's ``dir = "cache"`` was a cache in every
    project's directory, none shared; in ``shinobi.toml`` it is the same either
    way, the file being in the directory ninja runs from.
    """
    flat = _flatten(_read_toml(path, instead))
    cache = flat.get("cache.dir")
    if isinstance(cache, str) and cache.strip() and not _absolute(cache):
        flat["cache.dir"] = os.path.join(path.parent, cache)
    return flat


def _absolute(value: str) -> bool:
    """Whether the path ``value`` names is absolute once its ``~`` and ``$VARIABLES``
    are expanded (one not set stays relative, and is refused as such later)."""
    return os.path.isabs(os.path.expanduser(os.path.expandvars(value)))


def _not_a_file(path: Path, instead: str, kind: str = "a directory") -> str:
    """The refusal of a configuration file that is a directory, a FIFO or a device:
    "fix its permissions" sent an admin to chmod a directory that no permission
    makes a file; a FIFO with no writer hung every command, and ``/dev/zero`` was
    read until memory ran out."""
    named = path == user_config_path() and os.environ.get("SHINOBI_CONFIG")
    what = "the directory" if kind == "a directory" else "it"
    fix = "name a file in SHINOBI_CONFIG" if named else f"move {what} aside, or {instead}"
    return f"{path} is {kind}, not a configuration file; {fix}"


_SECTIONS = ("execution", "backend", "provenance", "cache")


def _from_environment(
    environ: Mapping[str, str], variables: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``SHINOBI_SECTION_KEY`` variables as dotted keys; ``variables`` is
    filled with the variable each key came from."""
    flat: dict[str, Any] = {}
    setters: dict[str, str] = {} if variables is None else variables
    for name, raw in environ.items():
        if not name.startswith("SHINOBI_") or name == "SHINOBI_CONFIG":
            continue
        rest = name[len("SHINOBI_") :].lower()
        for section in _SECTIONS:
            if rest.startswith(section + "_"):
                key = rest[len(section) + 1 :]
                import json  # only when a SHINOBI_ variable is set

                try:
                    value: Any = _text(raw) if _wants_text(section, key) else json.loads(raw)
                except ValueError:
                    value = raw
                dotted = f"{section}.{_table_key(section, key)}"
                # a table given as JSON sets its keys, one by one as a file's do: as a
                # whole it replaced the table every other layer had filled
                given = _flatten(value, f"{dotted}.") if isinstance(value, Mapping) else {}
                for each, one in (given or {dotted: value}).items():
                    _refuse_two_variables(each, name, setters)
                    flat[each] = one
                    setters[each] = name
                break
        else:
            _refuse_misspelt_section(name, rest)
    return flat


def _refuse_two_variables(key: str, name: str, setters: Mapping[str, str]) -> None:
    """Refuse a second variable for ``key``, or for a table holding it or a key in it.

    ``SHINOBI_BACKEND_SLURM='{"sbatch_opts": [...]}'`` beside
    ``SHINOBI_BACKEND_SLURM_SBATCH_OPTS``: the variables of one environment come in
    no order, so which of them won would be a matter of chance.
    """
    same = [key] if key in setters else _nested_either_way(setters, key)
    other = next((setters[k] for k in same if setters[k] != name), None)
    if other is not None:
        raise ConfigError(
            f"{other} and {name} both set {min([key, *same], key=len)}; unset one of them"
        )


def _refuse_misspelt_section(name: str, rest: str) -> None:
    """A ``SHINOBI_`` variable whose first word is nearly a section's name is a typo.

    Other ``SHINOBI_`` variables (``SHINOBI_DEBUG``, a site's own) are left alone.
    """
    import difflib

    head = rest.split("_", 1)[0]
    if head.lower() in _SECTIONS:  # a section with no key: SHINOBI_CACHE=0
        section = head.lower()
        model = AppConfig.model_fields[section].annotation
        keys = sorted(getattr(model, "model_fields", {}))
        shown = ", ".join(f"SHINOBI_{section.upper()}_{key.upper()}" for key in keys[:4])
        more = ", ..." if len(keys) > 4 else ""
        raise ConfigError(
            f"{name} names the section {section!r} but no key in it; variables are"
            f" SHINOBI_<SECTION>_<KEY>, e.g. {shown}{more} (`ninja config show` lists them)"
        )
    close = difflib.get_close_matches(head, _SECTIONS, n=1, cutoff=0.8)
    if close:
        fixed = f"SHINOBI_{close[0].upper()}{name[len('SHINOBI_') + len(head) :]}"
        raise ConfigError(
            f"{name}: there is no configuration section {head!r}; did you mean {fixed}?"
            " (variables are SHINOBI_<SECTION>_<KEY>)"
        )
    homes = _unsectioned(rest)
    if homes:
        fixed = " or ".join(f"SHINOBI_{home.replace('.', '_').upper()}" for home in homes)
        raise ConfigError(
            f"{name} names no configuration section; did you mean {fixed}?"
            " (variables are SHINOBI_<SECTION>_<KEY>)"
        )


def _unsectioned(key: str) -> list[str]:
    """Where ``key`` (a variable's or a file's, without its section) belongs:
    ``docker_network`` is ``backend.docker_network`` (a backend's table),
    ``max_workers`` is ``execution.max_workers``; [] when it is none of those.

    Exact names only: a site's own ``SHINOBI_`` variables are left alone, and
    were taken for a near miss at a guess; so is ``dir`` (``SHINOBI_DIR`` is
    what an environment module sets for an installation, not ``cache.dir``).
    """
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS

    head, _, rest = key.partition("_")
    if rest and head in KNOWN_PROVIDERS[BACKENDS]:  # SHINOBI_DOCKER_NETWORK
        return [f"backend.{key}"]
    if key == "dir":
        return []
    return [f"{section}.{key}" for section in _SECTIONS if key in _known_keys([section])]


def _table_key(section: str, key: str) -> str:
    """``slurm_sbatch_opts`` -> ``slurm.sbatch_opts`` for a backend table's key.

    The backends whose table a variable may reach are the ones shinobi knows
    and the installed ones, a third party's too (``nice_level`` ->
    ``nice.level``; of two installed names, ``my_nice`` before ``my``).
    """
    if section != "backend" or key in BackendConfig.model_fields:
        return key
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS, OFFLOAD, available

    name, _, rest = key.partition("_")
    if name in KNOWN_PROVIDERS[BACKENDS] and rest:
        return f"{name}.{rest}"
    installed = sorted({*available(BACKENDS), *available(OFFLOAD)}, key=len, reverse=True)
    name = next((n for n in installed if key.startswith(f"{n}_") and len(key) > len(n) + 1), "")
    return f"{name}.{key[len(name) + 1 :]}" if name else key


def _text(raw: str) -> str:
    """A text setting's variable: as written, or a JSON string's text. Written as
    JSON, as a list must be (``SHINOBI_CACHE_DIR='"/scratch/cache"'``), the quotes
    were the value's own, and the cache went to a folder called ``"`` under the
    working directory."""
    import json

    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        try:
            text = json.loads(raw)
        except ValueError:
            return raw
        if isinstance(text, str):
            return text
    return raw


def _wants_text(section: str, key: str) -> bool:
    """Whether ``section.key`` holds text, so a variable's value is taken as it is:
    a cache directory called ``123`` or a venv called ``null`` is still text."""
    model: Any = AppConfig.model_fields[section].annotation
    info = getattr(model, "model_fields", {}).get(key)
    if info is None:
        return False
    kinds = _kinds(info.annotation)
    return str in kinds and not ({int, float, bool} & kinds)


def _known_keys(section: list[str]) -> list[str]:
    """The keys a configuration section (a path of names from the top) may hold."""
    model: Any = AppConfig
    for name in section:
        info = getattr(model, "model_fields", {}).get(name)
        model = info.annotation if info is not None else None
    return list(getattr(model, "model_fields", {}))


def _refuse_unknown_backend_keys(config: AppConfig, sources: Mapping[str, str]) -> None:
    """A key under ``[backend]`` that is neither a global key nor the table of a
    backend (installed, or one shinobi knows a distribution for) is a typo."""
    extra = config.backend.model_extra or {}
    if not extra:
        return
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS, OFFLOAD, available

    backends = {*available(BACKENDS), *available(OFFLOAD), *KNOWN_PROVIDERS[BACKENDS]}
    for key, value in extra.items():
        if isinstance(value, dict) and key in backends:
            continue
        table = isinstance(value, dict)
        known = sorted(backends) if table else list(BackendConfig.model_fields)
        nearest = did_you_mean(key, known)
        if table and not nearest:
            # the table of a plugin not installed in this environment (a config
            # file shared by several): unused until a step names that backend,
            # which is refused then; `ninja doctor` warns of it
            continue
        origin = _origin(["backend", key], sources)  # the layer of this very key first
        what = (
            f"[backend.{key}] is not the table of a backend"
            if table
            else (f"configuration key 'backend.{key}' is not a setting")
        )
        near = nearest or ("" if table else _homed(key))  # [backend] max_workers
        if not near and not table and origin.startswith("environment variable"):
            near = _misspelt_backend_variable(key, backends)
        raise ConfigError(
            f"{what} (from {origin}){near} (a backend's own settings go"
            " in its table, [backend.NAME], e.g. [backend.slurm] sbatch_opts)"
        )


def _misspelt_backend_variable(key: str, backends: set[str]) -> str:
    """``SHINOBI_BACKEND_DOKCER_NETWORK`` reads as the global key ``dokcer_network``:
    the variable the user meant, when its first word is near a backend's name."""
    import difflib

    head, _, rest = key.partition("_")
    close = difflib.get_close_matches(head, sorted(backends), n=1) if rest else []
    if not close:
        return ""
    return (
        f"; no backend named {head!r} is installed: did you mean"
        f" SHINOBI_BACKEND_{close[0].upper()}_{rest.upper()}?"
    )


def _origin(loc: list[str], sources: Mapping[str, str]) -> str:
    """The layer that set the key at ``loc`` (or a key under it, for a whole table)."""
    for depth in range(len(loc), 0, -1):
        found = _set_at_or_under(".".join(loc[:depth]), sources)
        if found:
            return found[0]
    return "configuration"


def _set_at_or_under(key: str, sources: Mapping[str, str]) -> list[str]:
    """The layers that set ``key``, or keys inside it when it is a table (whose keys
    are recorded one by one, and may come from several layers), each once."""
    if key in sources:
        return [sources[key]]
    return list(dict.fromkeys(v for k, v in sources.items() if k.startswith(f"{key}.")))


def _refusal(
    exc: ValidationError, sources: Mapping[str, str], replaced: Mapping[str, str]
) -> ConfigError:
    """One line for the first thing wrong, in the configuration's terms, not pydantic's;
    ``replaced`` is the lower layer whose value of another shape a key's layer replaced."""
    first = exc.errors()[0]
    loc = [str(p) for p in first.get("loc", ())]
    kind = first.get("type")
    message = str(first.get("msg"))
    if kind == "extra_forbidden":  # a misspelt key or section
        near = (_homed(loc[0]) or _backend_table(loc[0])) if len(loc) == 1 else ""
        message = "not a setting" + (near or did_you_mean(loc[-1], _known_keys(loc[:-1])))
    elif kind == "value_error":
        message = message.removeprefix("Value error, ")
    elif kind in ("model_type", "dict_type"):  # `execution = 3`: a section given a value
        message = f"this is a section: write [{'.'.join(loc)}] with its keys under it"
    elif kind in ("bool_parsing", "bool_type"):  # the words a switch reads, as a plugin's says
        message = _NOT_A_SWITCH.format(value=first.get("input"))
    origin = _origin(loc, sources)
    if origin.startswith("environment") and kind in ("list_type", "dict_type", "tuple_type"):
        message += """; an environment variable holds a list as JSON, e.g. '["sh", "git"]'"""
    dotted = ".".join(loc)
    under = [k for k in replaced if k == dotted or k.startswith(f"{dotted}.")]
    if under:  # a table over a path, say: the file below is the other half of the story
        message += f" (it replaces the value set in {replaced[under[0]]})"
    return ConfigError(f"configuration key {'.'.join(loc)!r} (from {origin}): {message}")


def _backend_table(key: str) -> str:
    """``"; a backend's settings go in [backend.slurm]"`` for a top-level ``[slurm]``."""
    from shinobi.backends.registry import BACKENDS, KNOWN_PROVIDERS

    if key not in KNOWN_PROVIDERS[BACKENDS]:
        return ""
    return f"; a backend's settings go in its table under backend: [backend.{key}]"


def _homed(key: str) -> str:
    """``"; did you mean 'execution.max_workers'?"`` for a section's key written at
    the top level (``max_workers``, ``workdir``), or glued to its section's name
    (``cache_dir``); "" when ``key`` is none of those."""
    import difflib

    homes: dict[str, list[str]] = {}
    for section in _SECTIONS:
        for name in _known_keys([section]):
            homes.setdefault(name, []).append(f"{section}.{name}")
    head, _, rest = key.partition("_")
    glued = difflib.get_close_matches(rest, _known_keys([head]), n=1, cutoff=0.7)
    if head in _SECTIONS and rest and glued:  # cache_dir, execution_maxworkers
        found = [f"{head}.{glued[0]}"]
    else:
        close = difflib.get_close_matches(key, list(homes), n=1, cutoff=0.8)
        found = homes[close[0]] if close else []
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(f) for f in found) + "?"


def _refuse_venv_table(merged: Mapping[str, Any], sources: Mapping[str, str]) -> None:
    """``[backend.venv]`` as a table: every other backend has one, the venv backend does not.

    Its settings are the global ``venv`` and ``venv_host_commands``; without
    this the table is refused as "Input should be a valid string".
    """
    keys = [k for k in merged if k.startswith("backend.venv.")]
    if keys:
        origin = sources.get(keys[0], "configuration")
        raise ConfigError(
            f"[backend.venv] (from {origin}) is not a table: the venv backend's settings are"
            ' global keys of [backend]: write `venv = "/path/to/venv"` (and'
            " `venv_host_commands = [...]`) under [backend]"
        )


def load_config(
    overrides: Mapping[str, Any] | None = None,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> AppConfig:
    """The effective configuration. ``overrides`` are dotted keys from CLI flags;
    ``cwd``: the directory whose ``shinobi.toml`` is the project file."""
    if cwd is not None:
        cwd = Path(cwd)  # a str from a script (load_config(cwd="proj")) failed on "/"
    layers: list[tuple[str, dict[str, Any]]] = []
    user = user_config_path()
    instead = "point SHINOBI_CONFIG at a file you can read"
    layers.append((f"user file {user}", _file_layer(user, instead)))
    project = project_config_path(cwd)
    instead = "run ninja from another directory (it reads ./shinobi.toml)"
    layers.append((f"project file {project}", _file_layer(project, instead)))
    variables: dict[str, str] = {}
    from_environment = _from_environment(os.environ if environ is None else environ, variables)
    layers.append(("environment", from_environment))
    layers.append(("command line", {k: v for k, v in (overrides or {}).items() if v is not None}))
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    replaced: dict[str, str] = {}
    for source, flat in layers:
        for key, value in flat.items():
            if isinstance(value, Mapping) and not value and _has_keys_under(merged, key):
                # an empty table (`[execution]` with its keys commented out) sets nothing:
                # as a value it replaced every key of that section from every layer
                continue
            replaced.pop(key, None)  # what a lower layer's value was is no longer the story
            for lower in _nested_either_way(merged, key):
                # a list over a table, a table over a string: the value of the higher
                # layer, whole; kept beside each other they nested into nonsense
                del merged[lower]
                replaced[key] = sources.pop(lower)
            merged[key] = value
            sources[key] = source
    for key, variable in variables.items():  # the variable, which is what the user set
        if sources.get(key) == "environment":
            sources[key] = f"environment variable {variable}"
    config = _validated(merged, sources, replaced) if merged else _defaults()
    _LOADED.clear()
    _LOADED.update(sources)
    return config


def _validated(
    merged: dict[str, Any], sources: dict[str, str], replaced: Mapping[str, str]
) -> AppConfig:
    """The configuration the layers' keys (``merged``, dotted) make, checked;
    ``replaced``: see :func:`_refusal`."""
    _refuse_venv_table(merged, sources)
    for section in _SECTION_MODELS:  # first, so AppConfig's validator reuses theirs
        section.model_rebuild()
    try:
        config = AppConfig.model_validate(_nest(merged))
    except ValidationError as exc:
        raise _refusal(exc, sources, replaced) from None
    config.sources = sources
    _refuse_unknown_backend_keys(config, sources)
    return config


#: The sections' models, built before AppConfig's (``defer_build``): built within it
#: instead, each section's would be built again for a section no layer sets.
_SECTION_MODELS = (ExecutionConfig, BackendConfig, ProvenanceConfig, CacheConfig)


def _defaults() -> AppConfig:
    """What validating no keys at all makes (every setting its default), without
    building a validator.

    The usual command has no configuration file and no ``SHINOBI_`` variable;
    building the five models' validators for nothing to check cost every
    such command about 5 ms of CPU. They are built (``defer_build``) when first used: a
    ``model_dump``, an assignment, a file's keys. The fields set are those
    validation leaves set: ``sources``, assigned after it.
    """
    return AppConfig.model_construct(
        {"sources"},
        execution=ExecutionConfig.model_construct(),
        backend=BackendConfig.model_construct(),
        provenance=ProvenanceConfig.model_construct(),
        cache=CacheConfig.model_construct(),
        sources={},
    )


#: Where each key of the configuration this process loaded last was set (see
#: :func:`said_where`).
_LOADED: dict[str, str] = {}
#: A plugin's word on one of its settings: ``[backend.slurm] poll_max ...`` or
#: ``backend.docker.init ...``. A pattern, compiled by ``re`` (and kept in its
#: cache) the first time an error needs it, not by every command as it starts.
_BACKEND_KEY = r"^(?:\[backend\.([\w-]+)\] |backend\.([\w-]+)\.)([\w-]+)"


def said_where(message: str) -> str:
    """``message`` with the layer that set the key it begins with, when it is a
    plugin's word about one of its settings (``[backend.slurm] poll_max must be
    ...``, ``backend.docker.init must be ...``): a plugin sees the merged values,
    not which file or variable gave them."""
    found = re.match(_BACKEND_KEY, message)
    if found is None:
        return message
    bracketed, dotted, key = found.groups()
    name = bracketed or dotted
    # a table's value ([backend.slurm.sbatch_opts]) was recorded by its keys
    layers = _set_at_or_under(f"backend.{name}.{key}", _LOADED)
    origin = " and ".join(layers) or _LOADED.get(f"backend.{key}")
    return f"{message} ({key} is set in {origin})" if origin else message
