"""Which lines of a container step's stderr the engine's client printed itself.

The engine's client (``docker run``, ``podman run``, ``apptainer exec``) and
the tool in the container write to the same stderr. Some engines add lines of
their own to a run that went well: docker's daemon warns
``WARNING: IPv4 forwarding is disabled. Networking will not work.`` for every
container on its default network of a host without IP forwarding. Read as the
tool's, such a line fails a cab whose wrangler takes ``^WARNING`` for an error.

The client prints these warnings before it starts the container (docker: its
create reply), or after the container ended (podman's cleanup), never among
what the payload prints: only the leading and trailing lines are looked at,
each against its engine's known wording, so a tool's own ``WARNING:`` line is
left alone and a 16 MiB stderr costs no more than a short one. An engine's
error on a failed start is none of these lines: it stays in ``stderr``, where
the failure's account reads it.
"""

from __future__ import annotations

import re

__all__ = ["APPTAINER_LINES", "DOCKER_LINES", "PODMAN_LINES", "split_engine_lines"]

#: The warnings docker's daemon returns when it creates a container, which its
#: client prints as ``WARNING: <text>`` (moby's daemon: network, kernel
#: capabilities, platform, port publishing).
DOCKER_LINES = re.compile(
    r"WARNING: (?:IPv4 forwarding is disabled\. Networking will not work\."
    r"|bridge-nf-call-ip6?tables is disabled"
    r"|Your kernel does not support .+"
    r"|The requested image's platform \(.+\) does not match the detected host platform .+"
    r"|Published ports are discarded when using host network mode)"
)
#: Podman's own log lines (logrus, forced to its ``LEVEL[0000]`` form). Its
#: errors (``ERRO[...]``, ``Error: ...``) are not among them: they may be why
#: a step failed.
PODMAN_LINES = re.compile(r"(?:WARN|INFO)\[\d{4}\] .*")
#: Apptainer's notes (``INFO:`` padded to its 9 columns: converting a SIF to a
#: sandbox, cleaning it up). Its ``WARNING:`` lines read like a tool's, and are kept.
APPTAINER_LINES = re.compile(r"INFO: {4}\S.*")


def split_engine_lines(stderr: str, engine: re.Pattern[str] | None) -> tuple[str, str]:
    """``stderr`` as (the tool's, the engine's): the engine's lines are its leading
    and trailing ones that ``engine`` matches whole, each with its line end.

    ``engine`` None: the engine adds nothing of its own, and ``stderr`` is the tool's.
    """
    if engine is None or not stderr:
        return stderr, ""
    start = _head_end(stderr, engine)
    end = _tail_start(stderr, engine, start)
    if start == 0 and end == len(stderr):
        return stderr, ""
    return stderr[start:end], stderr[:start] + stderr[end:]


def _head_end(text: str, engine: re.Pattern[str]) -> int:
    """Where the leading run of ``engine``'s lines ends (0: none leads)."""
    at = 0
    while at < len(text):
        stop = text.find("\n", at)
        stop = len(text) if stop < 0 else stop + 1
        if not _is_engine_line(text[at:stop], engine):
            break
        at = stop
    return at


def _tail_start(text: str, engine: re.Pattern[str], floor: int) -> int:
    """Where the trailing run of ``engine``'s lines starts, not before ``floor``."""
    end = len(text)
    while end > floor:
        start = text.rfind("\n", floor, end - 1) + 1 or floor
        if not _is_engine_line(text[start:end], engine):
            break
        end = start
    return end


def _is_engine_line(line: str, engine: re.Pattern[str]) -> bool:
    return engine.fullmatch(line.rstrip("\r\n")) is not None
