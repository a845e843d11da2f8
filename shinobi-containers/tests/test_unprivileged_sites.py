"""The tests run as the unprivileged user reach shinobi wherever the clone is.

They handed that user this environment's site directories as they were: from
a clone under /root (mode 700), as on a CI machine, every import failed with
"Permission denied" and the tests skipped. Now they import from a
world-readable copy, an editable install's source included.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_engines import reachable_sites, unprivileged_user

from shinobi.testing.plugin import require_engine

PROBE = "import sys, site\nfor d in sys.argv[1:]: site.addsitedir(d)\nimport audit25_installed, audit25_editable\nprint('ok')"


@pytest.fixture
def private() -> Iterator[Path]:
    """A home of root's own (mode 700): a site dir and an editable source inside it."""
    home = Path(tempfile.mkdtemp(prefix="shinobi-private-", dir="/tmp"))
    (home / "site").mkdir()
    (home / "site" / "audit25_installed.py").write_text("")
    (home / "src").mkdir()
    (home / "src" / "audit25_editable.py").write_text("")
    (home / "site" / "_audit25_editable.pth").write_text(f"{home / 'src'}\n")
    home.chmod(0o700)
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="shinobi-shared-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_unprivileged_user_imports_from_a_copy_of_a_private_environment(
    private: Path, shared: Path
) -> None:
    user = str(unprivileged_user()["name"])
    known = subprocess.run(["id", "-u", user], capture_output=True, check=False)
    require_engine("users", known.returncode == 0, f"no user {user}: run testbed/up.sh users")
    sites = reachable_sites(shared, [str(private / "site")])
    assert all(not s.startswith(str(private)) for s in sites)
    done = subprocess.run(
        ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", PROBE, *sites],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/tmp",
    )
    assert done.stdout == "ok\n", done.stderr
