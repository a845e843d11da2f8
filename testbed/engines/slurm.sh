# shellcheck shell=bash
# Slurm 22.05 (Debian), one node, with accounting through slurmdbd so that
# sacct sees finished jobs: munged, mariadbd, slurmdbd, slurmctld, slurmd.
#
# The node advertises 8 CPUs (config_overrides) on a 2-core VM so tests can
# run several jobs side by side; DefMemPerCPU keeps a job without --mem from
# taking the whole node.

SLURM_CLUSTER=shinobi
SLURM_PARTITION=debug
SLURM_CPUS=8
SLURM_DEF_MEM_PER_CPU=512
SLURM_DB=slurm_acct_db
SLURM_DB_USER=slurm
SLURM_DB_PASS=shinobi-testbed   # a local socket only; nothing else reaches it

slurm_real_memory() {
    local mb
    mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
    ((mb - 2048 >= 8192)) && echo 8192 || echo $((mb - 2048))
}

# Writes the config; succeeds when any of it changed.
slurm_config() {
    local node rc=1
    node=$(hostname -s)
    write_file /etc/slurm/slurm.conf <<EOF && rc=0
# Written by shinobi's testbed/engines/slurm.sh
ClusterName=$SLURM_CLUSTER
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
ReturnToService=2

ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=task=5
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobCompType=jobcomp/none

SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$SLURM_DEF_MEM_PER_CPU
SlurmdParameters=config_overrides
InactiveLimit=0
KillWait=5
MinJobAge=300
Waittime=0

NodeName=$node NodeAddr=127.0.0.1 CPUs=$SLURM_CPUS RealMemory=$(slurm_real_memory) State=UNKNOWN
PartitionName=$SLURM_PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    # This host mounts cgroup v1 and v2 side by side: name the plugin.
    write_file /etc/slurm/cgroup.conf <<EOF && rc=0
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainDevices=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=no
EOF
    write_file /etc/slurm/slurmdbd.conf 600 <<EOF && rc=0
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
SlurmUser=root
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=$SLURM_DB
StorageUser=$SLURM_DB_USER
StoragePass=$SLURM_DB_PASS
EOF
    return "$rc"
}

slurm_munge() {
    if [[ ! -s /etc/munge/munge.key ]]; then
        (umask 077 && dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none)
        changed "made /etc/munge/munge.key"
    fi
    chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown munge:munge /run/munge /var/lib/munge /var/log/munge
    start_daemon munged setpriv --reuid=munge --regid=munge --init-groups munged -F
    wait_for 20 "munged" bash -c 'munge -n | unmunge'
}

slurm_mariadb() {
    [[ -d /var/lib/mysql/mysql ]] || {
        mariadb-install-db --user=mysql >/dev/null
        changed "initialised /var/lib/mysql"
    }
    mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld
    start_daemon mariadbd mariadbd --user=mysql --bind-address=127.0.0.1
    wait_for 60 "mariadbd" mariadb-admin ping
    if ! mariadb -N -e "SHOW GRANTS FOR '$SLURM_DB_USER'@'localhost'" 2>/dev/null | grep -q "$SLURM_DB"; then
        mariadb <<EOF
CREATE DATABASE IF NOT EXISTS $SLURM_DB;
CREATE USER IF NOT EXISTS '$SLURM_DB_USER'@'localhost' IDENTIFIED BY '$SLURM_DB_PASS';
GRANT ALL ON $SLURM_DB.* TO '$SLURM_DB_USER'@'localhost';
EOF
        changed "created database $SLURM_DB and its user $SLURM_DB_USER"
    fi
}

slurm_node_state() { timeout 20 sinfo -h -N -n "$(hostname -s)" -o %T 2>/dev/null; }
slurm_node_usable() { [[ $(slurm_node_state) =~ ^(idle|mixed|allocated|completing)$ ]]; }

# sacct_state JOBID: the first word of the job's final State, or nothing yet.
sacct_state() { timeout 20 sacct -n -X -P -j "$1" -o State 2>/dev/null | awk '{ print $1; exit }'; }
sacct_final() { [[ $(sacct_state "$1") =~ ^(COMPLETED|FAILED|OUT_OF_MEMORY|CANCELLED|TIMEOUT)$ ]]; }

# What to look at when a job does not start or end.
SLURM_HINT="squeue, sinfo -N -l and $TESTBED_STATE/slurm/{slurmctld,slurmd}.log"

slurm_verify() {
    log "verifying: srun, sbatch --wrap + sacct"
    # srun waits for its job to start, for ever if the node never takes it.
    bounded 60 "srun --time=1 true" "$SLURM_HINT" srun --time=1 true \
        || die "srun true failed: look at $SLURM_HINT"
    local jid state
    jid=$(bounded 30 "sbatch --wrap true" "$SLURM_HINT" \
        sbatch --parsable --time=1 --output=/dev/null --wrap true) || die "sbatch failed: look at $SLURM_HINT"
    wait_for 60 "sacct to record job $jid" sacct_final "$jid"
    state=$(sacct_state "$jid")
    [[ $state == COMPLETED ]] || die "job $jid ended $state, not COMPLETED: look at $SLURM_HINT"
}

up_slurm() {
    apt_install slurm-wlm slurmdbd munge mariadb-server mariadb-client
    mkdir -p /var/lib/slurm/slurmctld /var/lib/slurm/slurmd
    # The shared scratch a cluster offers; the docs' examples write there.
    if [[ ! -d /scratch ]]; then
        mkdir -p /scratch && chmod 1777 /scratch
        changed "made /scratch (mode 1777), the cluster's shared scratch"
    fi
    if slurm_config; then
        local d
        for d in slurmd slurmctld slurmdbd; do stop_daemon "$d"; done
    fi
    slurm_munge
    slurm_mariadb

    start_daemon slurmdbd slurmdbd -D
    wait_for 60 "slurmdbd" sacctmgr -n list cluster
    if ! bounded 30 "sacctmgr list cluster" "$(engine_logs)" sacctmgr -n -P list cluster format=cluster | grep -qx "$SLURM_CLUSTER"; then
        bounded 30 "sacctmgr add cluster" "$(engine_logs)" sacctmgr -i add cluster "$SLURM_CLUSTER" >/dev/null
        changed "registered cluster $SLURM_CLUSTER with slurmdbd"
    fi
    start_daemon slurmctld slurmctld -D
    wait_for 60 "slurmctld" scontrol ping
    start_daemon slurmd slurmd -D
    wait_for 60 "the node to register" bash -c "sinfo -h -N -n '$(hostname -s)' -o %T | grep -qv '^unknown'"
    local state
    state=$(slurm_node_state)
    if [[ $state =~ ^(down|drain|fail) ]]; then
        bounded 30 "scontrol update" "$(engine_logs)" scontrol update nodename="$(hostname -s)" state=resume
        changed "resumed node $(hostname -s) (it was $state)"
    fi
    wait_for 60 "the node to be idle" slurm_node_usable
    slurm_verify

    summary_set slurm \
        "cluster=$SLURM_CLUSTER" "partition=$SLURM_PARTITION" "node=$(hostname -s)" \
        "cpus=$SLURM_CPUS" "real_memory_mb=$(slurm_real_memory)" \
        "def_mem_per_cpu_mb=$SLURM_DEF_MEM_PER_CPU" accounting=slurmdbd scratch=/scratch
}
