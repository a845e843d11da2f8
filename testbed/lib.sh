# shellcheck shell=bash
# Shared helpers for testbed/up.sh, testbed/down.sh and testbed/engines/*.sh.
#
# The machines this runs on have no systemd: every daemon is started here,
# detached with setsid, and its pid recorded under $TESTBED_STATE so that
# down.sh stops exactly what up.sh started and nothing else.

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TESTBED_STATE=${TESTBED_STATE:-/run/shinobi-testbed}      # pids, daemon logs
TESTBED_CACHE=${TESTBED_CACHE:-/var/cache/shinobi-testbed} # slow-to-make things
TESTBED_ETC=${TESTBED_ETC:-/etc/shinobi-testbed}           # config we own
TESTBED_SUMMARY=$TESTBED_CACHE/engines.json
TESTBED_IMAGES=$TESTBED_CACHE/images

# Unprivileged users the tests may use.
TESTBED_USER=shinobi-user TESTBED_USER_UID=1500
TESTBED_REMOTE_USER=shinobi-remote TESTBED_REMOTE_UID=1501

export DEBIAN_FRONTEND=noninteractive
export LC_ALL=C.UTF-8
# Where engines' binaries live even when the caller's PATH is a venv's.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# ---------------------------------------------------------------- messages

ENGINE=${ENGINE:-testbed}
# up.sh points this at a file that collects what the run changed.
TESTBED_CHANGES=${TESTBED_CHANGES:-/dev/null}
TESTBED_LOCK_FD=${TESTBED_LOCK_FD:-}

log() { printf '[%s] %s\n' "$ENGINE" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$ENGINE" "$*" >&2; exit 1; }
# Record (and print) something this run changed on the machine.
changed() { echo "$ENGINE: $*" >>"$TESTBED_CHANGES"; log "$*"; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

require_root() { [[ $(id -u) == 0 ]] || die "run me as root"; }

# ---------------------------------------------------------------- files

# write_file PATH [MODE] < content: replace PATH only when the content
# differs. Succeeds (status 0) when it wrote, so callers can restart a daemon.
write_file() {
    local path=$1 mode=${2:-644} tmp
    mkdir -p "$(dirname "$path")"
    tmp=$(mktemp "$path.XXXXXX")
    cat >"$tmp"
    if [[ -f $path ]] && cmp -s "$tmp" "$path"; then
        rm -f "$tmp"
        return 1
    fi
    chmod "$mode" "$tmp"
    mv -f "$tmp" "$path"
    changed "wrote $path"
}

# set_conf_line FILE KEY VALUE: make "KEY = VALUE" the only setting of KEY in
# a "key = value" style file (commented-out defaults are left alone).
set_conf_line() {
    local file=$1 key=$2 value=$3
    if grep -qxF "$key = $value" "$file"; then return 0; fi
    sed -i "/^[[:space:]]*${key}[[:space:]]*=/d" "$file"
    printf '%s = %s\n' "$key" "$value" >>"$file"
    changed "set '$key = $value' in $file"
}

# ---------------------------------------------------------------- packages

APT_UPDATED=${APT_UPDATED:-}

is_installed() {
    [[ $(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null) == installed ]]
}

# apt_install PKG...: install the packages that are missing, nothing else.
apt_install() {
    local missing=() p
    for p in "$@"; do is_installed "$p" || missing+=("$p"); done
    ((${#missing[@]})) || return 0
    if [[ -z $APT_UPDATED ]]; then
        log "apt-get update"
        apt-get -q -o DPkg::Lock::Timeout=900 update >/dev/null
        APT_UPDATED=1
    fi
    changed "apt-get install ${missing[*]}"
    # No init system here, but keep maintainer scripts from starting any
    # service with default flags through invoke-rc.d all the same.
    local policy=/usr/sbin/policy-rc.d own_policy=
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && own_policy=1
    fi
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=900 \
        "${missing[@]}" >"$TESTBED_STATE/apt-$ENGINE.log" 2>&1 \
        || { tail -n 30 "$TESTBED_STATE/apt-$ENGINE.log" >&2; [[ -z $own_policy ]] || rm -f "$policy"; die "apt-get install failed"; }
    [[ -z $own_policy ]] || rm -f "$policy"
}

# debian_mirror: the Debian mirror the host's apt uses (deb822 or one-line).
debian_mirror() {
    local m
    m=$(awk '/^URIs:/ && !/security/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
    [[ -n $m ]] || m=$(awk '$1 == "deb" && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
    echo "${m:-http://deb.debian.org/debian}"
}

# A private apt state under DIR (own sources, lists and cache), so the host's
# apt configuration stays untouched. private_apt_opts DIR prints the apt-get
# options that use it; private_apt_setup DIR SOURCES_LINE... writes its
# sources.list and runs "update" when its lists are empty.
private_apt_opts() {
    local dir=$1
    printf '%s\n' -o "Dir::Etc::SourceList=$dir/sources.list" \
        -o "Dir::Etc::SourceParts=$dir/sources.list.d" \
        -o "Dir::State=$dir/state" -o "Dir::State::status=/var/lib/dpkg/status" \
        -o "Dir::Cache=$dir/cache" -o "DPkg::Lock::Timeout=900" -q
}
private_apt_setup() {
    local dir=$1; shift
    mkdir -p "$dir/sources.list.d" "$dir/state/lists/partial" "$dir/cache/archives/partial"
    local fresh=
    printf '%s\n' "$@" | write_file "$dir/sources.list" && fresh=1
    if [[ -n $fresh ]] || ! { compgen -G "$dir/state/lists/*_Packages*" || compgen -G "$dir/state/lists/*_Sources*"; } >/dev/null; then
        local opts; mapfile -t opts < <(private_apt_opts "$dir")
        log "apt-get update (private state in $dir)"
        apt-get "${opts[@]}" update >/dev/null
    fi
}

# ---------------------------------------------------------------- daemons

pidfile() { echo "$TESTBED_STATE/$ENGINE/$1.pid"; }

# pid_alive PID: running, not a zombie (our daemons' parent, pid 1 here, may
# take a while to reap them). A zombie has no /proc/PID/exe.
pid_alive() { [[ -n $(readlink "/proc/$1/exe" 2>/dev/null) ]]; }

# daemon_running NAME: the daemon up.sh started under NAME is still alive.
# The pid file holds "pid exe-path argv-hash"; the exe path keeps a recycled
# pid from being mistaken for it.
daemon_running() {
    local f pid exe
    f=$(pidfile "$1")
    [[ -f $f ]] || return 1
    read -r pid exe _ <"$f" || return 1
    [[ -n $pid ]] || return 1
    [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$exe"* ]]
}

# start_daemon NAME CMD...: start CMD (which must stay in the foreground)
# detached in its own session, its output in $TESTBED_STATE/ENGINE/NAME.log.
# Does nothing when it is already running with the same command line;
# restarts it when the command line changed.
start_daemon() {
    local name=$1; shift
    local hash
    hash=$(printf '%s\0' "$@" | md5sum | cut -c1-32)
    if daemon_running "$name"; then
        [[ $(awk '{ print $3 }' "$(pidfile "$name")") == "$hash" ]] && return 0
        changed "$name's command line changed: restarting it"
        stop_daemon "$name"
    fi
    local dir=$TESTBED_STATE/$ENGINE
    mkdir -p "$dir"
    # A non-interactive shell's background job is no process-group leader, so
    # setsid needs no fork, and the subshell execs it: $! is the daemon's own
    # pid. The daemon runs from /, not from the checkout up.sh was called in:
    # a checkout removed later would leave it in a deleted directory, which
    # slurmstepd reports on every job's stderr ("Unable to get current
    # working directory").
    # The daemon must not inherit up.sh's per-engine lock, or it would hold
    # the lock for as long as it lives.
    [[ -n $TESTBED_LOCK_FD ]] || exec {TESTBED_LOCK_FD}>/dev/null
    (cd / && exec setsid "$@") </dev/null >>"$dir/$name.log" 2>&1 {TESTBED_LOCK_FD}>&- &
    local pid=$! exe
    sleep 0.2
    pid_alive "$pid" || { tail -n 20 "$dir/$name.log" >&2; die "$name exited at once (log: $dir/$name.log)"; }
    exe=$(readlink "/proc/$pid/exe")
    echo "$pid $exe $hash" >"$(pidfile "$name")"
    grep -qxF "$name" "$dir/order" 2>/dev/null || echo "$name" >>"$dir/order"
    changed "started $name (pid $pid, log $dir/$name.log)"
}

# stop_daemon NAME: SIGTERM, then SIGKILL after 20 s.
stop_daemon() {
    local name=$1 f pid exe i
    f=$(pidfile "$name")
    if daemon_running "$name"; then
        read -r pid exe _ <"$f"
        kill "$pid" 2>/dev/null || true
        for ((i = 0; i < 200; i++)); do pid_alive "$pid" || break; sleep 0.1; done
        if pid_alive "$pid"; then kill -9 "$pid" 2>/dev/null || true; fi
        log "stopped $name (pid $pid)"
    fi
    rm -f "$f"
}

# stop_engine_daemons: stop what up.sh started for $ENGINE, newest first.
stop_engine_daemons() {
    local order=$TESTBED_STATE/$ENGINE/order name
    [[ -f $order ]] || return 0
    tac "$order" | while read -r name; do stop_daemon "$name"; done
    rm -f "$order"
}

# engine_logs: where to look when $ENGINE does not answer.
engine_logs() { echo "the logs in $TESTBED_STATE/$ENGINE/"; }

# wait_for SECONDS WHAT CMD...: poll CMD until it succeeds, for SECONDS at most.
wait_for() {
    local timeout=$1 what=$2; shift 2
    local deadline=$((SECONDS + timeout))
    until poll_once "$((deadline - SECONDS))" "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || die "timed out after ${timeout}s waiting for $what: look at $(engine_logs)"
        sleep 0.3
    done
}

# poll_once SECONDS CMD...: run CMD once. A program is killed after SECONDS
# (at least 1), so a daemon that takes the connection and never answers
# cannot hang wait_for; a shell function must bound its own commands.
poll_once() {
    local left=$1; shift
    ((left > 0)) || left=1
    if [[ $(type -t "$1") == function ]]; then
        "$@"
    else
        timeout --kill-after=5 "$left" "$@"
    fi
}

# bounded SECONDS WHAT HINT CMD...: run CMD (a program), killed after SECONDS.
# One that does not finish dies with WHAT and HINT (what to look at);
# otherwise CMD's own exit status is returned.
bounded() {
    local seconds=$1 what=$2 hint=$3 rc=0; shift 3
    timeout --kill-after=5 "$seconds" "$@" || rc=$?
    if ((rc == 124 || rc == 137)); then
        die "$what did not finish within ${seconds}s: look at $hint"
    fi
    return "$rc"
}

# ---------------------------------------------------------------- users

# ensure_user NAME UID: the account NAME, made with UID when that is free. A
# machine may have given UID to an account of its own: then useradd picks the
# number, and engines.json records the real one (id -u), which tests read.
ensure_user() {
    local name=$1 uid=$2 numbers=()
    if ! id -u "$name" >/dev/null 2>&1; then
        if ! getent passwd "$uid" >/dev/null; then
            numbers=(--uid "$uid")
        else
            log "uid $uid is $(getent passwd "$uid" | cut -d: -f1)'s here: useradd picks one for $name"
        fi
        # its own group, numbered as the user where that is free (useradd's way),
        # or the group of that name a removed account of this name left behind
        if getent group "$name" >/dev/null; then numbers+=(--gid "$name"); else numbers+=(--user-group); fi
        useradd "${numbers[@]}" --create-home --shell /bin/bash "$name" \
            || die "useradd $name failed (see above): remove or rename the account that holds its name or number"
        changed "created user $name (uid $(id -u "$name"))"
    fi
    # "*" rather than useradd's "!": no password login, yet not a locked
    # account, so sshd (UsePAM no) still accepts key logins.
    if [[ $(getent shadow "$name" | cut -d: -f2) == '!'* ]]; then usermod -p '*' "$name"; fi
}

# ---------------------------------------------------------------- summary

# summary_set ENGINE KEY=VALUE...: record facts for tests in engines.json.
# Dotted keys nest ("images.busybox=..."); integers and true/false are typed.
summary_set() {
    python3 "$TESTBED_DIR/summary.py" set "$@"
}
summary_drop() {
    python3 "$TESTBED_DIR/summary.py" drop "$@"
}
