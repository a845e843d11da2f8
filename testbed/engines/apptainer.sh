# shellcheck shell=bash
# Apptainer 1.4 (and "singularity", a symlink to it). Neither bookworm nor its
# backports ship it, so this takes Debian sid's binary package and gives it
# sid's newer glibc privately: the binary and its starter get their own
# loader and an rpath to a private lib dir (patchelf). The host's libc and
# apt configuration stay untouched: sid's packages come through a private
# apt state, and the .debs are cached by version.

APPTAINER_CACHE=$TESTBED_CACHE/apptainer
APPTAINER_DEBS=(apptainer libc6 libseccomp2 libsqlite3-0)
APPTAINER_LIBEXEC=/usr/lib/x86_64-linux-gnu/apptainer
APPTAINER_GLIBC=$APPTAINER_LIBEXEC/private-glibc
APPTAINER_STAMP=$APPTAINER_LIBEXEC/.shinobi-testbed
SIF_BUSYBOX=$TESTBED_IMAGES/busybox.sif
SIF_PYTHON=$TESTBED_IMAGES/python.sif

# apptainer_debs: set APPTAINER_DEB_FILES to the cached .deb of each package
# (its newest version), downloading them from sid when any is missing.
apptainer_debs() {
    local dir=$APPTAINER_CACHE/debs p missing=
    mkdir -p "$dir"
    for p in "${APPTAINER_DEBS[@]}"; do
        compgen -G "$dir/${p}_*.deb" >/dev/null || missing=1
    done
    if [[ -n $missing ]]; then
        local opts
        private_apt_setup "$APPTAINER_CACHE/apt-sid" "deb $(debian_mirror) sid main"
        mapfile -t opts < <(private_apt_opts "$APPTAINER_CACHE/apt-sid")
        (cd "$dir" && apt-get "${opts[@]}" download "${APPTAINER_DEBS[@]}" 2>&1) \
            | grep -v '^W: Download is performed unsandboxed' >&2 || true
        changed "downloaded ${APPTAINER_DEBS[*]} from sid into $dir"
    fi
    APPTAINER_DEB_FILES=()
    for p in "${APPTAINER_DEBS[@]}"; do
        compgen -G "$dir/${p}_*.deb" >/dev/null || die "could not download $p from sid"
        APPTAINER_DEB_FILES+=("$(printf '%s\n' "$dir/${p}"_*.deb | sort -V | tail -n 1)")
    done
}

apptainer_install() {
    apptainer_debs
    local debs=("${APPTAINER_DEB_FILES[@]}") stamp
    stamp=$(basename -a "${debs[@]}")
    if [[ -f $APPTAINER_STAMP && $(<"$APPTAINER_STAMP") == "$stamp" ]] && apptainer version >/dev/null 2>&1; then
        return 0
    fi
    local x deb lib
    x=$(mktemp -d)
    for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$x"; done

    # apptainer itself; keep an apptainer.conf that is already there.
    install -m 755 "$x/usr/bin/apptainer" /usr/bin/apptainer
    mkdir -p "$APPTAINER_LIBEXEC" /var/lib/apptainer
    cp -a "$x$APPTAINER_LIBEXEC/." "$APPTAINER_LIBEXEC/"
    cp -a "$x/var/lib/apptainer/." /var/lib/apptainer/
    cp -an "$x/etc/apptainer" /etc/
    ln -sfn apptainer /usr/bin/singularity

    # sid's loader, libc (and friends), libseccomp and libsqlite3, privately.
    rm -rf "$APPTAINER_GLIBC" && mkdir -p "$APPTAINER_GLIBC"
    for lib in "$x"/usr/lib/x86_64-linux-gnu/*.so*; do cp -a "$lib" "$APPTAINER_GLIBC/"; done
    for bin in /usr/bin/apptainer "$APPTAINER_LIBEXEC/bin/starter"; do
        patchelf --set-interpreter "$APPTAINER_GLIBC/ld-linux-x86-64.so.2" \
            --force-rpath --set-rpath "$APPTAINER_GLIBC" "$bin"
    done
    rm -rf "$x"
    apptainer version >/dev/null || die "the patched apptainer does not run"
    echo "$stamp" >"$APPTAINER_STAMP"
    changed "installed apptainer $(apptainer version) from ${debs[0]##*/}"
}

# build_sif NAME SIF: build SIF from the cached rootfs tarball NAME.tar,
# again when the tarball changed (its id is stored next to the SIF).
build_sif() {
    local name=$1 sif=$2 id rootfs
    id=$(<"$TESTBED_IMAGES/$name.tar.id")
    [[ -s $sif && -f $sif.id && $(<"$sif.id") == "$id" ]] && return 0
    rootfs=$(mktemp -d)
    tar --numeric-owner -C "$rootfs" -xf "$TESTBED_IMAGES/$name.tar"
    apptainer -s build --force "$sif.tmp" "$rootfs" >"$TESTBED_STATE/apptainer-build-$name.log" 2>&1 \
        || { tail -n 20 "$TESTBED_STATE/apptainer-build-$name.log" >&2; die "apptainer build $sif failed"; }
    rm -rf "$rootfs"
    mv -f "$sif.tmp" "$sif"
    echo "$id" >"$sif.id"
    chmod 644 "$sif" "$sif.id"
    changed "built $sif"
}

# Does --memory kill an allocation beyond it? (Exit 137, as a SIGKILL.)
apptainer_memory_limit_works() {
    local rc=0
    # bash's "Killed" job notice comes from the shell that waits for timeout,
    # which re-raises the SIGKILL on itself: the braces' 2>/dev/null is that shell's.
    { timeout 120 apptainer -s exec --memory 64M "$SIF_PYTHON" \
        python3 -c 'x = b"x" * (300 * 1024 * 1024)' >/dev/null 2>&1; } 2>/dev/null || rc=$?
    [[ $rc == 137 ]]
}

up_apptainer() {
    apt_install patchelf squashfs-tools uidmap ca-certificates e2fsprogs fuse2fs squashfuse
    apptainer_install
    # What Debian's udev rule would do: unprivileged users mount SIFs with
    # squashfuse. (No udev here, and the kernel makes /dev/fuse root-only.)
    if [[ $(stat -c %a /dev/fuse) != 666 ]]; then
        chmod 666 /dev/fuse
        changed "chmod 666 /dev/fuse"
    fi
    local conf=/etc/apptainer/apptainer.conf
    # The default capability set needs CAP_SYS_RESOURCE; there is no systemd.
    set_conf_line "$conf" "root default capabilities" file
    set_conf_line "$conf" "systemd cgroups" no

    ensure_rootfs_tars
    build_sif busybox "$SIF_BUSYBOX"
    build_sif python "$SIF_PYTHON"

    log "verifying: apptainer exec, as root and as $TESTBED_USER; --memory"
    [[ $(timeout 120 apptainer -s exec "$SIF_BUSYBOX" sh -c 'echo ok') == ok ]] \
        || die "apptainer exec failed or took over 120s: look at apptainer's error above and $conf"
    [[ $(setpriv --reuid="$TESTBED_USER" --regid="$TESTBED_USER" --init-groups \
        env HOME=/tmp timeout 120 apptainer -s exec "$SIF_PYTHON" python3 -c 'print("ok")') == ok ]] \
        || die "apptainer exec as $TESTBED_USER failed or took over 120s: look at apptainer's error above and $conf"
    local memory=false
    apptainer_memory_limit_works && memory=true

    summary_set apptainer \
        binary=/usr/bin/apptainer singularity=/usr/bin/singularity \
        "version=$(apptainer version)" \
        "images.busybox=$SIF_BUSYBOX" "images.python=$SIF_PYTHON" \
        "memory_limits=$memory"
}
