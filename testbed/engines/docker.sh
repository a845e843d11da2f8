# shellcheck shell=bash
# Docker: Debian's docker.io (20.10) daemon, no bridge, no iptables; the test
# images are imported from the cached rootfs tarballs (see images.sh).

DOCKER_FLAGS=(
    --storage-driver=overlay2
    --iptables=false --ip-forward=false --ip-masq=false --bridge=none
    --exec-opt native.cgroupdriver=cgroupfs
)

up_docker() {
    apt_install docker.io containerd runc
    if ! timeout 20 docker info >/dev/null 2>&1; then
        start_daemon dockerd dockerd "${DOCKER_FLAGS[@]}"
        wait_for 60 "dockerd to answer" docker info
    fi
    ensure_rootfs_tars
    import_image docker busybox "$IMAGE_BUSYBOX"
    import_image docker python "$IMAGE_PYTHON"

    log "verifying: docker run --rm --network none"
    # (timeout: a wedged dockerd takes the request and never answers)
    [[ $(timeout 120 docker run --rm --network none "$IMAGE_BUSYBOX" sh -c 'echo ok') == ok ]] \
        || die "docker run of $IMAGE_BUSYBOX failed or took over 120s: look at $(engine_logs)"
    [[ $(timeout 120 docker run --rm --network none "$IMAGE_PYTHON" python3 -c 'print("ok")') == ok ]] \
        || die "docker run of $IMAGE_PYTHON failed or took over 120s: look at $(engine_logs)"

    summary_set docker \
        socket=/var/run/docker.sock \
        "images.busybox=$IMAGE_BUSYBOX" "images.python=$IMAGE_PYTHON" \
        run_flags="--network none"
}
