"""parse_entry: json.loads of an entry's bytes, with the same result and the same errors."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from shinobi.cache_entries import parse_entry, read_small

SAMPLES = [
    b'{"format":2,"key":"ab","outputs":{"out":"f"}}',
    '{"step":"caf\u00e9 \U0001f600"}'.encode(),
    b'{"a":"\\ud800"}',  # a lone surrogate, escaped
    b'{"a":1}  \n',
    b' {"a":1}',
    b"[1, 2]",
    codecs.BOM_UTF8 + b'{"a":1}',
    '{"a":1}'.encode("utf-16"),
    '{"a":1}'.encode("utf-16-le"),
    '{"a":1}'.encode("utf-32"),
]

BROKEN = [
    b"",
    b'{"',
    b'{"a":1',
    b'{"a":1}x',
    b'{"a":"\xff"}',  # not UTF-8
    b'{"a":"\xed\xa0\x80"}',  # a surrogate encoded in the bytes themselves
    b"null" * 10_000 + b"[",
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_same_value_as_json_loads(raw: bytes) -> None:
    assert parse_entry(raw) == json.loads(raw)


@pytest.mark.parametrize("raw", BROKEN)
def test_same_error_as_json_loads(raw: bytes) -> None:
    try:
        json.loads(raw)
    except (ValueError, RecursionError) as exc:
        expected: type[BaseException] = type(exc)
    else:
        expected = type(None)
    try:
        parse_entry(raw)
    except (ValueError, RecursionError) as exc:
        got: type[BaseException] = type(exc)
    else:
        got = type(None)
    assert got is expected


@pytest.mark.parametrize("size", [0, 1, 557, 65535, 65536, 65537, 300_000])
def test_an_entry_is_read_whole_whatever_its_size(tmp_path: Path, size: int) -> None:
    """One read for a small entry, a loop past 64 KiB: the bytes are the file's either way."""
    path = tmp_path / "entry.json"
    data = bytes(i % 251 for i in range(size))
    path.write_bytes(data)
    read, mtime = read_small(str(path))
    assert read == data
    assert mtime == path.stat().st_mtime
