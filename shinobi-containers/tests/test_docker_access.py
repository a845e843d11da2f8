"""A user the docker daemon does not let in is told how to get in, not to start it.

The daemon runs; the socket refuses this user. "start it, or point DOCKER_HOST
at a running one" sent them looking for a daemon that was up all along.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from live_engines import live_backend, shared_sites, unprivileged_user

REACH = r"""
import json, site, sys
for directory in sys.argv[1:]:
    site.addsitedir(directory)
from shinobi.backends import get_backend
try:
    get_backend("docker").reach_daemon()
    print(json.dumps({"reached": True}))
except Exception as exc:
    print(json.dumps({"reached": False, "said": str(exc), "code": getattr(exc, "exit_code", 0)}))
"""


def test_a_user_outside_the_docker_group_is_told_to_join_it() -> None:
    live_backend("docker")  # the daemon answers root
    user = unprivileged_user()
    done = subprocess.run(
        [
            "runuser",
            "-u",
            str(user["name"]),
            "--",
            "/usr/bin/python3",
            "-c",
            REACH,
            *shared_sites(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/tmp",
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if found["reached"]:
        pytest.skip(f"{user['name']} may use docker here: nothing is refused")
    assert found["code"] == 74
    assert "permission denied" in found["said"] and "docker group" in found["said"]
    assert "start it" not in found["said"]
