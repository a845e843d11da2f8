"""``--older-than`` ages: what ``ninja clean --runs`` and ``ninja cache prune`` delete by."""

from __future__ import annotations

import pytest

from shinobi.cli.ages import parse_age
from shinobi.errors import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("45s", 45),
        ("90min", 5400),
        ("12h", 43200),
        ("30d", 2592000),
        ("2w", 1209600),
        ("3", 259200),
    ],
)
def test_ages_in_each_unit(text: str, seconds: float) -> None:
    assert parse_age(text) == seconds


def test_a_bare_m_is_refused_as_minutes_or_months() -> None:
    """``6m`` deleted every run older than six minutes from a user meaning six months."""
    with pytest.raises(
        UsageError, match=r"'m' could mean minutes or months; write 6min .* \(180d\)"
    ):
        parse_age("6m")


@pytest.mark.parametrize("text", ["", "d", "-3d", "٣d", "3 days", "1e3s"])
def test_what_is_not_an_age_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="write an age like 30d, 12h, 90min or 2w"):
        parse_age(text)
