# ruff: noqa: UP031, RUF005 (this file must parse as Python 2.7: no f-strings, no starred tuples)
"""Start the pystep runner, once the interpreter is one that can run it.

The step's interpreter (a venv's ``bin/python3``, an image's ``python3``) may
be any Python at all, and radio astronomy keeps old ones about: CASA 5's
Python 2.7, venvs of 3.6 made for a tool long ago. The runner is modern
Python, and such an interpreter fails to even parse it, so the user read a
``SyntaxError`` about ``from __future__ import annotations`` in ninja's own
code. This file is written to be read by any Python, 2.7 included (no
f-strings, no annotations): it checks the version first and says what to do
in the runner's own terms (see :mod:`shinobi.pyrunner.runner`), then hands
over to the runner.

Python 3.11 is the floor whichever way the runner finds shinobi and pydantic:
its own installation of shinobi-core needs 3.11, and ninja's, borrowed, loads
only in ninja's own version, which is 3.11 or later too.
"""

import json
import os
import sys

#: The oldest Python a pystep can run under (shinobi-core's own floor).
MINIMUM = (3, 11)


def _refuse(spec_file):  # type: (str) -> int
    """Say, on stderr and in the outputs file the runner would write, why not."""
    here = "%d.%d" % tuple(sys.version_info[:2])
    message = (
        "%s is Python %s, and a @pystep needs Python %d.%d or newer where it runs:"
        " make the venv (or image) with a newer Python, or make the step a Cab,"
        " whose command line runs under any Python" % ((sys.executable, here) + MINIMUM)
    )
    sys.stderr.write("shinobi: %s\n" % message)
    try:
        with open(spec_file) as fh:
            outputs_file = json.load(fh)["outputs_file"]
        with open(outputs_file + ".partial", "w") as fh:
            json.dump({"error": message, "stage": "setup"}, fh)
        os.rename(outputs_file + ".partial", outputs_file)
    except (OSError, IOError, ValueError, KeyError):  # noqa: UP024 (IOError is 2.7's)
        pass  # ninja then words the failure from stderr, which says it
    return 1


def main():  # type: () -> int
    if len(sys.argv) != 2:
        sys.stderr.write("usage: boot.py SPEC.json\n")
        return 2
    if tuple(sys.version_info[:2]) < MINIMUM:
        return _refuse(sys.argv[1])
    import runpy

    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runner.py")
    sys.argv[0] = runner
    runpy.run_path(runner, run_name="__main__")
    return 0  # the runner ends the process itself (os._exit, or its exception)


if __name__ == "__main__":
    sys.exit(main())
