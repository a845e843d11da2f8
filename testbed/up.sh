#!/usr/bin/env bash
# Bring up the engines the live tests use, on a Debian 12 machine without
# systemd. Installs what is missing, writes config, starts daemons detached,
# and waits until each engine really runs something. Idempotent: with
# everything up, a second run changes nothing and takes seconds.
#
#   testbed/up.sh ENGINE...   ENGINE: slurm docker podman apptainer k8s sshd, or "all"
#   testbed/up.sh users       only the unprivileged test user (every run makes it)
#
# Facts tests need (image names, SIF paths, kubeconfig, ssh user/key/port)
# go to /var/cache/shinobi-testbed/engines.json; see docs/testbed.md.
set -euo pipefail
# shellcheck source=testbed/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=testbed/images.sh
source "$TESTBED_DIR/images.sh"

ALL_ENGINES=(slurm docker podman apptainer k8s sshd)
declare -A NEEDS=([k8s]=docker)

usage() { sed -n '2,12s/^# \{0,1\}//p' "$0"; exit 2; }
(($#)) || usage
require_root

# The engines to bring up, in order, each after the engines it needs.
engines=()
add_engine() {
    local e=$1
    [[ " ${ALL_ENGINES[*]} " == *" $e "* ]] || { echo "unknown engine: $e" >&2; usage; }
    [[ " ${engines[*]} " == *" $e "* ]] && return 0
    [[ -z ${NEEDS[$e]:-} ]] || add_engine "${NEEDS[$e]}"
    engines+=("$e")
}
for arg in "$@"; do
    case $arg in
        all) for e in "${ALL_ENGINES[@]}"; do add_engine "$e"; done ;;
        users) ;;
        -h | --help) usage ;;
        *) add_engine "$arg" ;;
    esac
done

mkdir -p "$TESTBED_STATE" "$TESTBED_CACHE" "$TESTBED_ETC"
TESTBED_CHANGES=$(mktemp)
export TESTBED_CHANGES
trap 'rm -f "$TESTBED_CHANGES"' EXIT

ensure_user "$TESTBED_USER" "$TESTBED_USER_UID"
summary_set testbed \
    "users.unprivileged.name=$TESTBED_USER" "users.unprivileged.uid=$(id -u "$TESTBED_USER")" \
    "users.unprivileged.gid=$(id -g "$TESTBED_USER")" "users.unprivileged.home=$(getent passwd "$TESTBED_USER" | cut -d: -f6)"

declare -A took status
failed=0
for e in "${engines[@]}"; do
    t0=$(now)
    # Each engine in a subshell of its own: its failure ends only it, and a
    # lock keeps two up.sh runs from setting up the same engine at once.
    # (Not inside an "if": bash would switch errexit off in there.)
    set +e
    (
        set -e
        ENGINE=$e
        exec {TESTBED_LOCK_FD}>"$TESTBED_STATE/$e.lock"
        flock "$TESTBED_LOCK_FD"
        # shellcheck source=/dev/null
        source "$TESTBED_DIR/engines/$e.sh"
        "up_$e"
    )
    rc=$?
    set -e
    if ((rc == 0)); then
        status[$e]=up
    else
        status[$e]=FAILED failed=1
        summary_drop "$e"  # tests must not take it for up
    fi
    took[$e]=$(elapsed "$t0")
done

echo
echo "== testbed summary ($TESTBED_SUMMARY)"
for e in "${engines[@]}"; do printf '  %-10s %-7s %6s s\n' "$e" "${status[$e]}" "${took[$e]}"; done
if [[ -s $TESTBED_CHANGES ]]; then
    echo "== changed:"
    sed 's/^/  /' "$TESTBED_CHANGES"
elif ((failed)); then
    echo "== nothing changed, and not everything is up: see FAILED above"
else
    echo "== nothing changed: everything was already up"
fi
exit "$failed"
