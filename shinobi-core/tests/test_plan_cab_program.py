"""A cab whose command's first word is blank is refused when it is made.

``Cab("c", [""])`` passed creation and the dry run, then failed at spawn with
an internal error (posix_spawnp refuses an empty program).
"""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from shinobi.steps import Cab


class Empty(BaseModel):
    pass


@pytest.mark.parametrize("command", [[""], ["", "x"], '"" x', [" ", "x"]])
def test_a_blank_program_is_refused_naming_the_cab(command: object) -> None:
    with pytest.raises(ValueError) as caught:
        Cab("c", command, Empty, Empty)  # type: ignore[arg-type]
    said = str(caught.value)
    assert said.startswith("cab 'c': its command's first word (the program) is ")
    assert said.endswith("; name the program first, such as ['wsclean', '-j', '4']")


def test_an_empty_argument_after_the_program_is_kept() -> None:
    assert Cab("c", ["echo", ""], Empty, Empty).command == ("echo", "")
