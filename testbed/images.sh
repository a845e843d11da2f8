# shellcheck shell=bash
# Root filesystems for the test images, made locally (there is no image
# registry here) and cached as tarballs under $TESTBED_IMAGES:
#
#   busybox.tar   /bin/busybox from Debian's busybox-static, a symlink for
#                 every applet (sh, cat, touch, sleep, dd, head, ...), /tmp
#   python.tar    debootstrap --variant=minbase bookworm + python3 (the full standard
#                 library: the pystep runner needs json, which python3-minimal lacks)
#
# Each tarball has a NAME.tar.id next to it (its sha256): engines label what
# they import with it and re-import when the tarball was rebuilt.

IMAGE_BUSYBOX=shinobi-test/busybox:latest
IMAGE_PYTHON=shinobi-test/python:bookworm
IMAGE_PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# _finish_tar NAME ROOTFS_DIR: pack ROOTFS_DIR into $TESTBED_IMAGES/NAME.tar.
_finish_tar() {
    local rootfs=$2 out=$TESTBED_IMAGES/$1.tar
    tar --numeric-owner -C "$rootfs" -cf "$out.tmp" .
    sha256sum "$out.tmp" | cut -c1-64 >"$out.id"
    mv -f "$out.tmp" "$out"
    changed "made $out"
}

# What every image's tarball is made with; a cached one of another layout is
# made again. 2: the root directory is 0755 (mktemp's 0700 kept a rootless
# podman container from starting: "stat /run/podman-init: permission denied").
IMAGE_LAYOUT=2

# current NAME: whether $TESTBED_IMAGES/NAME.tar is there and of IMAGE_LAYOUT.
current() {
    [[ -s $TESTBED_IMAGES/$1.tar && -s $TESTBED_IMAGES/$1.tar.id ]] \
        && [[ $(cat "$TESTBED_IMAGES/$1.tar.layout" 2>/dev/null) == "$IMAGE_LAYOUT" ]]
}

ensure_busybox_tar() {
    current busybox && return 0
    apt_install busybox-static
    local bin rootfs applet
    bin=$(command -v busybox)
    rootfs=$(mktemp -d)
    chmod 755 "$rootfs"
    mkdir -p "$rootfs"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,var/tmp,proc,sys,dev}
    chmod 1777 "$rootfs/tmp" "$rootfs/var/tmp"
    cp "$bin" "$rootfs/bin/busybox"
    # --list-full names each applet's usual place, e.g. bin/sh, usr/bin/env.
    while read -r applet; do
        [[ $applet == bin/busybox ]] || ln -sf /bin/busybox "$rootfs/$applet"
    done < <("$bin" --list-full)
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$rootfs/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$rootfs/etc/group"
    _finish_tar busybox "$rootfs"
    echo "$IMAGE_LAYOUT" >"$TESTBED_IMAGES/busybox.tar.layout"
    rm -rf "$rootfs"
}

PYTHON_IMAGE_PACKAGES=python3

ensure_python_tar() {
    # The .pkgs stamp rebuilds a cached tarball made with another package set.
    if current python \
        && [[ $(cat "$TESTBED_IMAGES/python.tar.pkgs" 2>/dev/null) == "$PYTHON_IMAGE_PACKAGES" ]]; then
        return 0
    fi
    apt_install debootstrap
    local rootfs t0
    rootfs=$(mktemp -d)
    chmod 755 "$rootfs"
    t0=$(now)
    log "debootstrap --variant=minbase bookworm (+$PYTHON_IMAGE_PACKAGES) from $(debian_mirror)"
    debootstrap --variant=minbase --include="$PYTHON_IMAGE_PACKAGES" bookworm "$rootfs" "$(debian_mirror)" \
        >"$TESTBED_STATE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$TESTBED_STATE/debootstrap.log" >&2; die "debootstrap failed"; }
    log "debootstrap took $(elapsed "$t0") s"
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "${rootfs:?}"/dev/*
    _finish_tar python "$rootfs"
    echo "$PYTHON_IMAGE_PACKAGES" >"$TESTBED_IMAGES/python.tar.pkgs"
    echo "$IMAGE_LAYOUT" >"$TESTBED_IMAGES/python.tar.layout"
    rm -rf "$rootfs"
}

ensure_rootfs_tars() {
    mkdir -p "$TESTBED_IMAGES"
    ensure_busybox_tar
    ensure_python_tar
}

# import_image docker|podman NAME IMAGE: import $TESTBED_IMAGES/NAME.tar as
# IMAGE unless IMAGE already carries that tarball's id.
import_image() {
    local tool=$1 name=$2 image=$3 id have
    id=$(<"$TESTBED_IMAGES/$name.tar.id")
    have=$("$tool" image inspect --format '{{index .Config.Labels "shinobi.testbed.id"}}' "$image" 2>/dev/null || true)
    [[ $have == "$id" ]] && return 0
    local out
    out=$("$tool" import --change "LABEL shinobi.testbed.id=$id" --change "ENV $IMAGE_PATH_ENV" \
        --change "CMD $(image_cmd "$name")" "$TESTBED_IMAGES/$name.tar" "$image" 2>&1) \
        || die "$tool import $image failed: $out"
    changed "$tool import $image"
}

# image_cmd NAME: the command an image starts by default.
image_cmd() {
    case $1 in
        busybox) echo '["/bin/sh"]' ;;
        python) echo '["python3"]' ;;
        pause) echo '["/pause"]' ;;
    esac
}
