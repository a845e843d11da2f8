# shellcheck shell=bash
# Podman 4.3 (Debian), rootful, daemonless. Its defaults do not work on this
# host, so /etc/containers/containers.conf names what does: runc (crun 1.8
# refuses hybrid cgroups), cgroupfs (no systemd), a file events log, no
# network namespace set-up by CNI (it would rewrite iptables and ip_forward),
# and ulimits no higher than the hard limits (raising them needs
# CAP_SYS_RESOURCE, which this machine lacks).

PODMAN_BUSYBOX=localhost/$IMAGE_BUSYBOX
PODMAN_PYTHON=localhost/$IMAGE_PYTHON

up_podman() {
    apt_install podman runc catatonit
    # nproc at the hard limit is still refused here; 32768 is known to work.
    local nofile nproc
    nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
    if [[ $nproc == unlimited ]] || ((nproc > 32768)); then nproc=32768; fi
    write_file /etc/containers/containers.conf <<EOF || true
# Written by shinobi's testbed/engines/podman.sh
[containers]
netns = "none"
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
    ensure_rootfs_tars
    import_image podman busybox "$PODMAN_BUSYBOX"
    import_image podman python "$PODMAN_PYTHON"

    log "verifying: podman run --rm --network none"
    [[ $(timeout 120 podman run --rm --network none "$PODMAN_BUSYBOX" sh -c 'echo ok') == ok ]] \
        || die "podman run of $PODMAN_BUSYBOX failed or took over 120s: look at podman's error above and /etc/containers/containers.conf"
    [[ $(timeout 120 podman run --rm --network none "$PODMAN_PYTHON" python3 -c 'print("ok")') == ok ]] \
        || die "podman run of $PODMAN_PYTHON failed or took over 120s: look at podman's error above and /etc/containers/containers.conf"

    summary_set podman \
        "images.busybox=$PODMAN_BUSYBOX" "images.python=$PODMAN_PYTHON" \
        run_flags="--network none" rootful=true
}
