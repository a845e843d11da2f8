# shellcheck shell=bash
# Kubernetes 1.20.2, one node, built from Debian's "kubernetes" source package
# (nothing installable ships a control plane). The kubelet runs pods as real
# Docker containers through its built-in dockershim, so this needs docker.sh.
#
# The build takes about 5 minutes on 2 cores; the binaries are cached in
# $TESTBED_CACHE/k8s-$K8S_VERSION/, so a warm machine skips it.

K8S_VERSION=1.20.2
K8S_BIN=$TESTBED_CACHE/k8s-$K8S_VERSION
K8S_ETC=$TESTBED_ETC/k8s
K8S_DATA=/var/lib/shinobi-testbed/k8s
K8S_KUBECONFIG=$TESTBED_ETC/kubeconfig
K8S_PAUSE_IMAGE=shinobi-test/pause:3.2
K8S_COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubelet)

# The two constants that must be 0 here: without CAP_SYS_RESOURCE nothing may
# set a negative oom_score_adj, and the kubelet would fail every sandbox.
K8S_OOM_PATCHES=(
    "pkg/kubelet/dockershim/docker_sandbox.go:defaultSandboxOOMAdj"
    "pkg/kubelet/qos/policy.go:guaranteedOOMScoreAdj"
)

k8s_build() {
    local c missing=
    for c in "${K8S_COMPONENTS[@]}"; do [[ -x $K8S_BIN/$c ]] || missing=1; done
    [[ -z $missing ]] && return 0

    apt_install golang-go dpkg-dev make rsync
    local apt_dir=$TESTBED_CACHE/apt-src work opts t0
    private_apt_setup "$apt_dir" "deb-src $(debian_mirror) bookworm main"
    mapfile -t opts < <(private_apt_opts "$apt_dir")
    rm -rf /var/tmp/shinobi-k8s-build.*  # what a failed build left behind
    work=$(mktemp -d /var/tmp/shinobi-k8s-build.XXXXXX)
    t0=$(now)
    log "fetching the kubernetes source package (build log: $TESTBED_STATE/k8s-build.log)"
    (cd "$work" && apt-get "${opts[@]}" source kubernetes) >"$TESTBED_STATE/k8s-build.log" 2>&1 \
        || { tail -n 20 "$TESTBED_STATE/k8s-build.log" >&2; die "apt-get source kubernetes failed"; }
    local src
    # bookworm's version is "1.20.5+really1.20.2": the tree must end in ours.
    src=$(find "$work" -maxdepth 1 -type d -name "kubernetes-*$K8S_VERSION" | head -n 1)
    [[ -n $src ]] || die "no kubernetes source tree for $K8S_VERSION in $work: $(ls "$work")"

    local patch file const
    for patch in "${K8S_OOM_PATCHES[@]}"; do
        file=$src/${patch%%:*} const=${patch##*:}
        sed -i -E "s/(\\b$const( int)? = )-[0-9]+/\\10/" "$file"
        grep -Eq "\\b$const( int)? = 0\\b" "$file" || die "could not set $const to 0 in $file"
    done

    log "building ${K8S_COMPONENTS[*]} (about 5 minutes)"
    (
        cd "$src"
        export GOPATH=$work/gopath GOCACHE=$work/gocache GOFLAGS=-mod=vendor GO111MODULE=off
        export KUBE_GIT_VERSION=v$K8S_VERSION KUBE_GIT_MAJOR=${K8S_VERSION%%.*}
        KUBE_GIT_MINOR=${K8S_VERSION#*.}
        export KUBE_GIT_MINOR=${KUBE_GIT_MINOR%%.*}
        export KUBE_GIT_TREE_STATE=clean KUBE_GIT_COMMIT=debian
        make WHAT="${K8S_COMPONENTS[*]/#/cmd/}"
    ) >>"$TESTBED_STATE/k8s-build.log" 2>&1 \
        || { tail -n 30 "$TESTBED_STATE/k8s-build.log" >&2; die "kubernetes build failed"; }

    mkdir -p "$K8S_BIN.tmp"
    for c in "${K8S_COMPONENTS[@]}"; do cp "$src/_output/bin/$c" "$K8S_BIN.tmp/"; done
    rm -rf "$K8S_BIN" && mv "$K8S_BIN.tmp" "$K8S_BIN"
    rm -rf "$work"
    changed "built Kubernetes $K8S_VERSION into $K8S_BIN in $(elapsed "$t0") s"
}

# The sandbox ("pause") image: a static C program that sleeps until told to
# stop and reaps zombies.
k8s_pause_image() {
    if [[ ! -s $TESTBED_IMAGES/pause.tar ]]; then
        local rootfs
        rootfs=$(mktemp -d)
        cat >"$rootfs/pause.c" <<'EOF'
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
    signal(SIGINT, quit);
    signal(SIGTERM, quit);
    signal(SIGCHLD, reap);
    for (;;) pause();
}
EOF
        gcc -static -Os -o "$rootfs/pause" "$rootfs/pause.c" || die "gcc -static failed (libc6-dev?)"
        rm "$rootfs/pause.c"
        _finish_tar pause "$rootfs"
        rm -rf "$rootfs"
    fi
    import_image docker pause "$K8S_PAUSE_IMAGE"
}

# Credentials: a bearer token for the admin user, a service-account key pair.
# Sets K8S_CREDENTIALS_CHANGED when the running apiserver would not know them.
k8s_config() {
    K8S_CREDENTIALS_CHANGED=
    mkdir -p "$K8S_ETC" "$K8S_DATA"
    [[ -s $K8S_ETC/token ]] || (umask 077 && openssl rand -hex 24 >"$K8S_ETC/token")
    if [[ ! -s $K8S_ETC/sa.key ]]; then
        (umask 077 && openssl genrsa -out "$K8S_ETC/sa.key" 2048 2>/dev/null)
        openssl rsa -in "$K8S_ETC/sa.key" -pubout -out "$K8S_ETC/sa.pub" 2>/dev/null
        changed "made a service-account key pair in $K8S_ETC"
    fi
    local token
    token=$(<"$K8S_ETC/token")
    printf '%s,admin,admin,"system:masters"\n' "$token" | write_file "$K8S_ETC/tokens.csv" 600 && K8S_CREDENTIALS_CHANGED=1
    write_file "$K8S_KUBECONFIG" 600 <<EOF || true
apiVersion: v1
kind: Config
clusters:
- name: shinobi-testbed
  cluster:
    server: https://127.0.0.1:6443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: $token
contexts:
- name: shinobi-testbed
  context:
    cluster: shinobi-testbed
    user: admin
    namespace: default
current-context: shinobi-testbed
EOF
}

kctl() { kubectl --kubeconfig "$K8S_KUBECONFIG" "$@" 2>/dev/null; }
k8s_node_ready() {
    [[ $(kctl get node localhost -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}') == True ]]
}

k8s_start() {
    local b=$K8S_BIN
    start_daemon etcd etcd --name shinobi-testbed --data-dir "$K8S_DATA/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster shinobi-testbed=http://127.0.0.1:2380
    wait_for 60 "etcd" curl -sf http://127.0.0.1:2379/health

    start_daemon kube-apiserver "$b/kube-apiserver" \
        --etcd-servers=http://127.0.0.1:2379 \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
        --cert-dir="$K8S_DATA/pki" \
        --token-auth-file="$K8S_ETC/tokens.csv" --authorization-mode=AlwaysAllow \
        --service-account-key-file="$K8S_ETC/sa.pub" \
        --service-account-signing-key-file="$K8S_ETC/sa.key" \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --api-audiences=https://kubernetes.default.svc.cluster.local \
        --service-cluster-ip-range=10.96.0.0/24 --endpoint-reconciler-type=none \
        --kubelet-preferred-address-types=Hostname --allow-privileged=true
    wait_for 90 "kube-apiserver" kctl get --raw /readyz

    start_daemon kube-controller-manager "$b/kube-controller-manager" \
        --kubeconfig="$K8S_KUBECONFIG" --leader-elect=false \
        --bind-address=127.0.0.1 --port=0 \
        --service-account-private-key-file="$K8S_ETC/sa.key" --use-service-account-credentials=false
    start_daemon kube-scheduler "$b/kube-scheduler" \
        --kubeconfig="$K8S_KUBECONFIG" --leader-elect=false --bind-address=127.0.0.1 --port=0
    start_daemon kubelet "$b/kubelet" \
        --kubeconfig="$K8S_KUBECONFIG" --root-dir=/var/lib/kubelet \
        --container-runtime=docker --pod-infra-container-image="$K8S_PAUSE_IMAGE" \
        --oom-score-adj=0 --cgroup-driver=cgroupfs --cgroups-per-qos=false \
        --enforce-node-allocatable= --fail-swap-on=false --make-iptables-util-chains=false \
        --hostname-override=localhost --address=127.0.0.1 \
        --read-only-port=0 --image-gc-high-threshold=100 --image-gc-low-threshold=99
}

k8s_verify() {
    local job
    job=shinobi-testbed-check-$(date +%s)
    log "verifying: a Job running $IMAGE_BUSYBOX"
    wait_for 60 "the default service account" kctl get serviceaccount default
    kctl apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $job
  labels: {app.kubernetes.io/managed-by: shinobi-testbed}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: check
        image: $IMAGE_BUSYBOX
        imagePullPolicy: Never
        command: [sh, -c, "echo ok"]
EOF
    kctl wait --for=condition=complete --timeout=120s "job/$job" >/dev/null \
        || die "Job $job did not complete: $(kctl describe job "$job" | tail -n 5)"
    [[ $(kctl logs "job/$job") == ok ]] || die "Job $job did not print ok"
    kctl delete job -l app.kubernetes.io/managed-by=shinobi-testbed --cascade=background >/dev/null
}

up_k8s() {
    docker info >/dev/null 2>&1 || die "docker is not up (up.sh starts it before k8s)"
    apt_install etcd-server curl openssl
    k8s_build
    k8s_pause_image
    k8s_config
    if [[ -n $K8S_CREDENTIALS_CHANGED ]]; then
        log "credentials changed: restarting the control plane"
        stop_engine_daemons
    fi
    k8s_start
    wait_for 120 "node localhost to be Ready" k8s_node_ready
    k8s_verify

    summary_set k8s \
        "version=$K8S_VERSION" "kubeconfig=$K8S_KUBECONFIG" context=shinobi-testbed \
        namespace=default node=localhost \
        "images.busybox=$IMAGE_BUSYBOX" "images.python=$IMAGE_PYTHON" \
        "images.pause=$K8S_PAUSE_IMAGE" image_pull_policy=Never
}
