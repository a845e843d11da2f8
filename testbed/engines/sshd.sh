# shellcheck shell=bash
# An sshd of our own on loopback only (127.0.0.1 and ::1), key logins only,
# and a second local account, shinobi-remote, that stands for "the remote
# host": root logs in to it with the testbed key, and rsync works over it.
# The system's /etc/ssh/sshd_config is not used.

SSHD_CONFIG=$TESTBED_ETC/sshd_config
SSH_KEY=/root/.ssh/shinobi_testbed_ed25519
SSH_KNOWN_HOSTS=/etc/ssh/ssh_known_hosts
SSH_CLIENT_CONFIG=/etc/ssh/ssh_config.d/shinobi-testbed.conf
SSH_HOSTS=(localhost 127.0.0.1 ::1)

port_in_use() { [[ -n $(ss -Htln "sport = :$1") ]]; }

# Port 22, unless something else listens there: then 2222.
sshd_port() {
    if daemon_running sshd; then
        awk '$1 == "Port" { print $2 }' "$SSHD_CONFIG"
    elif port_in_use 22; then
        echo 2222
    else
        echo 22
    fi
}

sshd_config() {
    local port=$1
    write_file "$SSHD_CONFIG" <<EOF
# Written by shinobi's testbed/engines/sshd.sh
Port $port
ListenAddress 127.0.0.1
ListenAddress ::1
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_ecdsa_key
HostKey /etc/ssh/ssh_host_rsa_key
# the testbed keeps its own record in sshd.pid (pid, program, command line):
# sshd writing its bare pid there too, after it, broke the record
PidFile none
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
}

# The remote account, and root's key in its authorized_keys.
sshd_account() {
    ensure_user "$TESTBED_REMOTE_USER" "$TESTBED_REMOTE_UID"
    if [[ ! -s $SSH_KEY ]]; then
        install -d -m 700 /root/.ssh
        ssh-keygen -q -t ed25519 -N '' -C shinobi-testbed -f "$SSH_KEY"
        changed "made $SSH_KEY"
    fi
    local home
    home=$(getent passwd "$TESTBED_REMOTE_USER" | cut -d: -f6)
    install -d -m 700 -o "$TESTBED_REMOTE_USER" -g "$TESTBED_REMOTE_USER" "$home/.ssh"
    write_file "$home/.ssh/authorized_keys" 600 <"$SSH_KEY.pub" || true
    chown "$TESTBED_REMOTE_USER:" "$home/.ssh/authorized_keys"
}

# The host keys, for every loopback name, go into the system-wide known_hosts
# (so any local user's ssh trusts them), replacing older entries for those
# names. They are read from the key files rather than with ssh-keyscan, whose
# answers here now and then lack a key type.
sshd_known_hosts() {
    local port=$1 names=() h
    for h in "${SSH_HOSTS[@]}"; do
        if ((port == 22)); then names+=("$h"); else names+=("[$h]:$port"); fi
    done
    local joined
    joined=$(IFS=,; echo "${names[*]}")
    {
        [[ -f $SSH_KNOWN_HOSTS ]] && awk -v names="$joined" '
            BEGIN { n = split(names, a, ","); for (i = 1; i <= n; i++) ours[a[i]] = 1 }
            { n = split($1, h, ","); for (i = 1; i <= n; i++) if (h[i] in ours) next; print }
        ' "$SSH_KNOWN_HOSTS"
        for h in /etc/ssh/ssh_host_{ed25519,ecdsa,rsa}_key.pub; do
            awk -v names="$joined" '{ print names, $1, $2 }' "$h"
        done
    } | write_file "$SSH_KNOWN_HOSTS" || true
}

# Root's ssh uses the testbed key (and port) for the loopback names.
sshd_client_config() {
    local port=$1
    write_file "$SSH_CLIENT_CONFIG" <<EOF || true
# Written by shinobi's testbed/engines/sshd.sh
Match localuser root host localhost,127.0.0.1,::1
    IdentityFile $SSH_KEY
    Port $port
EOF
}

sshd_verify() {
    local h tmp
    log "verifying: ssh and rsync as $TESTBED_REMOTE_USER@localhost"
    for h in "${SSH_HOSTS[@]}"; do
        ssh -o BatchMode=yes "$TESTBED_REMOTE_USER@$h" true || die "ssh $TESTBED_REMOTE_USER@$h failed"
    done
    tmp=$(mktemp -d)
    echo ok >"$tmp/file"
    rsync -a "$tmp/" "$TESTBED_REMOTE_USER@localhost:.testbed-rsync-check/" || die "rsync to the remote failed"
    rsync -a "$TESTBED_REMOTE_USER@localhost:.testbed-rsync-check/file" "$tmp/back" || die "rsync back failed"
    ssh -o BatchMode=yes "$TESTBED_REMOTE_USER@localhost" rm -rf .testbed-rsync-check
    [[ $(<"$tmp/back") == ok ]] || die "rsync round trip changed the file"
    rm -rf "$tmp"
}

up_sshd() {
    apt_install openssh-server openssh-client rsync iproute2
    local port
    port=$(sshd_port)
    mkdir -p /run/sshd "$TESTBED_STATE/sshd"
    ssh-keygen -A >/dev/null
    sshd_config "$port" && stop_daemon sshd
    sshd_account
    /usr/sbin/sshd -t -f "$SSHD_CONFIG" || die "sshd rejects $SSHD_CONFIG"
    # sshd re-executes itself, so it must be started by its absolute path.
    start_daemon sshd /usr/sbin/sshd -D -e -f "$SSHD_CONFIG"
    wait_for 20 "sshd to listen on port $port" port_in_use "$port"
    sshd_known_hosts "$port"
    sshd_client_config "$port"
    sshd_verify

    summary_set sshd \
        host=localhost "port=$port" "user=$TESTBED_REMOTE_USER" "uid=$(id -u "$TESTBED_REMOTE_USER")" \
        "identity_file=$SSH_KEY" "known_hosts=$SSH_KNOWN_HOSTS" \
        listen="127.0.0.1,::1"
}
