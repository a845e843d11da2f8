"""A user the docker daemon does not let in is told how to get in, not to start it.

The daemon runs; the socket refuses this user. "start it, or point DOCKER_HOST
at a running one" sent them looking for a daemon that was up all along.

On the testbed docker is rootful and its unprivileged user is outside the docker
group (docs/testbed.md), so there the socket must refuse. A reach_daemon() that
never refuses made the user "reach" it, and the test used to skip then: the one
regression it guards against turned it into a skip, in CI too.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from live_engines import live_backend, shared_sites, unprivileged_user

from shinobi.testing.plugin import in_ci

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
        nothing_refused = f"{user['name']} reached the docker daemon: nothing was refused"
        if in_ci() or "docker" in os.environ.get("SHINOBI_TESTBED_ENGINES", "").split(","):
            pytest.fail(f"{nothing_refused}, where the testbed's docker refuses that user")
        pytest.skip(f"{nothing_refused}; {user['name']} may use docker on this machine")
    assert found["code"] == 74
    assert "permission denied" in found["said"] and "docker group" in found["said"]
    assert "start it" not in found["said"]
