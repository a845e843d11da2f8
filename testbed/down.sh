#!/usr/bin/env bash
# Stop the daemons that testbed/up.sh started (and only those: their pids are
# recorded under /run/shinobi-testbed/ENGINE/). Installed packages, config and
# the cache stay, so the next up.sh is quick.
#
#   testbed/down.sh [ENGINE...]   default: every engine
set -euo pipefail
# shellcheck source=testbed/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Dependants first: the kubelet's pods run in docker.
DOWN_ORDER=(k8s sshd apptainer podman docker slurm)
require_root

wanted=("$@")
((${#wanted[@]})) || wanted=("${DOWN_ORDER[@]}")
for e in "${wanted[@]}"; do
    [[ " ${DOWN_ORDER[*]} " == *" $e "* ]] || { echo "unknown engine: $e" >&2; exit 2; }
done
for e in "${DOWN_ORDER[@]}"; do
    [[ " ${wanted[*]} " == *" $e "* ]] || continue
    (
        ENGINE=$e
        exec {TESTBED_LOCK_FD}>"$TESTBED_STATE/$e.lock"
        flock "$TESTBED_LOCK_FD"
        stop_engine_daemons
    )
    summary_drop "$e"
done
