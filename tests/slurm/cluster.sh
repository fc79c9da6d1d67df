#!/usr/bin/env bash
# cluster.sh: a real one-machine Slurm test cluster (one slurmctld, N slurmd -N nXXX).
#
# Usage: tests/slurm/cluster.sh start|stop|status|wait-idle|restart-ctld|env
#   start         write the configuration into the run dir (fresh state), start
#                 slurmctld -i and every slurmd, then wait until all nodes are idle
#   stop          scancel, scontrol shutdown, then kill leftovers by pid file
#   status        print what runs; exit 0 when slurmctld and all slurmd are up
#   wait-idle     wait until sinfo shows every node idle (bounded)
#   restart-ctld  stop slurmctld only and start it again, recovering its state
#   env           print shell lines (export SLURM_CONF=..., PATH=...) for clients
#
# Environment (all optional):
#   TOPOGNN_SLURM_PREFIX      Slurm install prefix (default <repo>/.local/slurm,
#                             built by scripts/build-slurm.sh)
#   TOPOGNN_CLUSTER_DIR       run dir (default <repo>/.local/cluster)
#   TOPOGNN_CLUSTER_NODES     node count, n001.. (default 32)
#   TOPOGNN_CLUSTER_PORT      slurmctld port (default 26817); slurmd ports are
#                             PORT+101 .. PORT+100+NODES
#   TOPOGNN_TOPOLOGY_PLUGIN   TopologyPlugin (default topology/tree)
#   TOPOGNN_TOPOLOGY_CONF     topology.conf copied beside slurm.conf (optional)
#   TOPOGNN_PLUGIN_DIRS       colon list of extra plugin dirs, searched before
#                             Slurm's own
#   TOPOGNN_CLUSTER_EXTRA_CONF  file whose lines are appended to slurm.conf
#   TOPOGNN_CLUSTER_EXTRA_FILES colon list of files copied beside slurm.conf
#                             (e.g. topognn.conf)
#   TOPOGNN_CLUSTER_STATE_FILES colon list of files copied into the fresh
#                             StateSaveLocation at start (e.g. a saved
#                             topognn_runtime.state)
#   TOPOGNN_CLUSTER_TIMEOUT   seconds to wait for start/stop steps (default 120)
#
# Everything is bounded in time; on a timeout the relevant log tails are shown.
set -euo pipefail

log() { printf '[cluster] %s\n' "$*"; }
die() { printf '[cluster] ERROR: %s\n' "$*" >&2; exit 1; }

script_dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd -- "$script_dir/../.." && pwd)

prefix=${TOPOGNN_SLURM_PREFIX:-$repo_root/.local/slurm}
run_dir=${TOPOGNN_CLUSTER_DIR:-$repo_root/.local/cluster}
nodes=${TOPOGNN_CLUSTER_NODES:-32}
ctld_port=${TOPOGNN_CLUSTER_PORT:-26817}
topo_plugin=${TOPOGNN_TOPOLOGY_PLUGIN:-topology/tree}
topo_conf=${TOPOGNN_TOPOLOGY_CONF:-}
extra_plugin_dirs=${TOPOGNN_PLUGIN_DIRS:-}
extra_conf=${TOPOGNN_CLUSTER_EXTRA_CONF:-}
extra_files=${TOPOGNN_CLUSTER_EXTRA_FILES:-}
state_files=${TOPOGNN_CLUSTER_STATE_FILES:-}
timeout_s=${TOPOGNN_CLUSTER_TIMEOUT:-120}

# Everything below lands in slurm.conf or on a command line: accept only plain
# values, never whitespace, '#', '=' or shell metacharacters.
is_path() { [[ "$1" =~ ^/[A-Za-z0-9._/+-]*$ ]]; }
is_path "$prefix" || die "TOPOGNN_SLURM_PREFIX must be a plain absolute path: $prefix"
is_path "$run_dir" || die "TOPOGNN_CLUSTER_DIR must be a plain absolute path: $run_dir"
[[ "$nodes" =~ ^[1-9][0-9]{0,2}$ ]] || die "TOPOGNN_CLUSTER_NODES must be 1..999: $nodes"
[[ "$ctld_port" =~ ^[1-9][0-9]{3,4}$ ]] && (( ctld_port + 100 + nodes < 65536 )) \
    || die "TOPOGNN_CLUSTER_PORT out of range: $ctld_port"
[[ "$topo_plugin" =~ ^topology/[a-z0-9_]+$ ]] \
    || die "TOPOGNN_TOPOLOGY_PLUGIN must look like topology/NAME: $topo_plugin"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "TOPOGNN_CLUSTER_TIMEOUT must be a positive integer"
if [[ -n "$topo_conf" ]]; then
    [[ -f "$topo_conf" ]] || die "TOPOGNN_TOPOLOGY_CONF is not a file: $topo_conf"
fi
if [[ -n "$extra_conf" ]]; then
    [[ -f "$extra_conf" ]] || die "TOPOGNN_CLUSTER_EXTRA_CONF is not a file: $extra_conf"
fi

plugin_dir="$prefix/lib/slurm"
if [[ -n "$extra_plugin_dirs" ]]; then
    IFS=: read -r -a dirs <<< "$extra_plugin_dirs"
    for d in "${dirs[@]}"; do
        is_path "$d" && [[ -d "$d" ]] || die "TOPOGNN_PLUGIN_DIRS entry is not a plain existing dir: $d"
    done
    plugin_dir="$extra_plugin_dirs:$plugin_dir"
fi

etc_dir="$run_dir/etc"
conf="$etc_dir/slurm.conf"
log_dir="$run_dir/log"
pid_dir="$run_dir/run"
state_dir="$run_dir/state"
spool_dir="$run_dir/spool"
ctld_pid_file="$pid_dir/slurmctld.pid"
slurmd_first_port=$(( ctld_port + 101 ))
slurmd_last_port=$(( ctld_port + 100 + nodes ))

export SLURM_CONF="$conf"
export PATH="$prefix/bin:$prefix/sbin:$PATH"
unset SLURM_JOB_ID SLURM_JOBID

node_name() { printf 'n%03d' "$1"; }
node_range() { printf 'n[001-%03d]' "$nodes"; }

# ---- processes -------------------------------------------------------------

# pid from a pid file, only if that process is alive and is the named daemon.
# Only the first line counts: after `scontrol reconfigure` the new slurmctld
# rewrites the file in place without truncating it, so a shorter pid (after
# the pids wrapped) leaves the old one's last digits on a second line.
pid_of() {
    local file=$1 name=$2 pid comm
    [[ -f "$file" ]] || return 1
    read -r pid < "$file" || [[ -n "$pid" ]] || return 1
    [[ "$pid" =~ ^[1-9][0-9]*$ ]] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    [[ "$comm" == "$name" ]] || return 1
    printf '%s' "$pid"
}

ctld_pid() { pid_of "$ctld_pid_file" slurmctld; }
slurmd_pid() { pid_of "$pid_dir/slurmd-$(node_name "$1").pid" slurmd; }

# Daemons started with this run dir's slurm.conf, found by their command
# line: a safety net for pid files that are gone or wrong.
conf_pids() {
    local dir comm
    for dir in /proc/[0-9]*; do
        read -r comm 2>/dev/null < "$dir/comm" || continue
        [[ "$comm" == slurmctld || "$comm" == slurmd ]] || continue
        grep -qxF -- "$conf" < <(tr '\0' '\n' 2>/dev/null < "$dir/cmdline") && printf '%s\n' "${dir#/proc/}"
    done
    return 0
}

all_pids() {
    local i
    {
        ctld_pid && printf '\n' || true
        for (( i = 1; i <= nodes; i++ )); do
            slurmd_pid "$i" && printf '\n' || true
        done
        conf_pids
    } | sort -un
}

show_logs() {
    local f
    log "---- tail of $log_dir/slurmctld.log ----"
    tail -n 30 -- "$log_dir/slurmctld.log" 2>/dev/null || log "(no slurmctld log)"
    f="$log_dir/slurmd-$(node_name 1).log"
    log "---- tail of $f ----"
    tail -n 15 -- "$f" 2>/dev/null || log "(no slurmd log)"
}

# ---- configuration ---------------------------------------------------------

check_ports_free() {
    local port busy=()
    command -v ss >/dev/null || return 0
    for port in "$ctld_port" $(seq "$slurmd_first_port" "$slurmd_last_port"); do
        if ss -Hltn "sport = :$port" | grep -q .; then busy+=("$port"); fi
    done
    [[ ${#busy[@]} -eq 0 ]] \
        || die "ports already in use: ${busy[*]} (another cluster? set TOPOGNN_CLUSTER_PORT)"
}

copy_files() { # VARIABLE-NAME colon-list dest-dir
    local f files
    [[ -n "$2" ]] || return 0
    IFS=: read -r -a files <<< "$2"
    for f in "${files[@]}"; do
        [[ -f "$f" ]] || die "$1 entry is not a file: $f"
        cp -- "$f" "$3/"
    done
}

write_config() {
    local i f
    [[ -x "$prefix/sbin/slurmctld" ]] \
        || die "no Slurm under $prefix (run scripts/build-slurm.sh first)"
    rm -rf -- "$etc_dir" "$log_dir" "$state_dir" "$spool_dir" "$pid_dir"
    mkdir -p -- "$etc_dir" "$log_dir" "$state_dir" "$pid_dir"
    for (( i = 1; i <= nodes; i++ )); do mkdir -p -- "$spool_dir/$(node_name "$i")"; done

    # auth/slurm and cred/slurm share this key; it sits beside slurm.conf.
    ( umask 077; head -c 1024 /dev/urandom > "$etc_dir/slurm.key" )
    chmod 0600 -- "$etc_dir/slurm.key"

    if [[ -n "$topo_conf" ]]; then
        cp -- "$topo_conf" "$etc_dir/topology.conf"
    elif [[ "$topo_plugin" == topology/tree ]]; then
        # Without the file topology/tree retries for 60 s, then slurmctld dies.
        log "no TOPOGNN_TOPOLOGY_CONF: writing a flat topology.conf (one switch, all nodes)"
        printf 'SwitchName=s0 Nodes=%s\n' "$(node_range)" > "$etc_dir/topology.conf"
    fi
    copy_files TOPOGNN_CLUSTER_EXTRA_FILES "$extra_files" "$etc_dir"
    copy_files TOPOGNN_CLUSTER_STATE_FILES "$state_files" "$state_dir"

    {
        printf '# written by tests/slurm/cluster.sh; regenerated on every start\n'
        printf 'ClusterName=topognn\n'
        printf 'SlurmctldHost=localhost(127.0.0.1)\n'
        printf 'SlurmctldPort=%s\n' "$ctld_port"
        printf 'SlurmUser=root\nSlurmdUser=root\n'
        printf 'AuthType=auth/slurm\nCredType=cred/slurm\n'
        printf 'PluginDir=%s\n' "$plugin_dir"
        printf 'StateSaveLocation=%s\n' "$state_dir"
        printf 'SlurmdSpoolDir=%s/%%n\n' "$spool_dir"
        printf 'SlurmctldPidFile=%s\n' "$ctld_pid_file"
        printf 'SlurmdPidFile=%s/slurmd-%%n.pid\n' "$pid_dir"
        printf 'SlurmctldLogFile=%s/slurmctld.log\n' "$log_dir"
        printf 'SlurmdLogFile=%s/slurmd-%%n.log\n' "$log_dir"
        printf 'SlurmctldDebug=info\nSlurmdDebug=info\n'
        printf 'ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n'
        printf 'JobAcctGatherType=jobacct_gather/none\n'
        printf 'AccountingStorageType=accounting_storage/none\n'
        printf 'MpiDefault=none\nMailProg=/bin/true\n'
        printf 'SlurmdParameters=config_overrides\n'
        printf 'SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n'
        printf 'TopologyPlugin=%s\n' "$topo_plugin"
        printf 'SchedulerType=sched/backfill\n'
        printf 'SchedulerParameters=bf_interval=1,sched_min_interval=100000\n'
        printf 'JobCompType=jobcomp/filetxt\nJobCompLoc=%s/jobcomp.txt\n' "$log_dir"
        # Short timers: tests must not wait on defaults meant for real clusters.
        printf 'ReturnToService=2\nSlurmctldTimeout=10\nSlurmdTimeout=30\n'
        printf 'MessageTimeout=5\nTCPTimeout=2\nKillWait=2\nWaittime=0\n'
        printf 'InactiveLimit=0\nMinJobAge=300\nHealthCheckInterval=0\n'
        printf 'NodeName=%s NodeHostname=localhost Port=%s-%s CPUs=4 RealMemory=1000 State=UNKNOWN\n' \
            "$(node_range)" "$slurmd_first_port" "$slurmd_last_port"
        printf 'PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE\n'
        if [[ -n "$extra_conf" ]]; then
            printf '# ---- from %s ----\n' "$extra_conf"
            cat -- "$extra_conf"
        fi
    } > "$conf"
    log "wrote $conf ($nodes nodes, $topo_plugin, PluginDir=$plugin_dir)"
}

# ---- commands --------------------------------------------------------------

# Start again, once, any slurmd that is not running some seconds after the
# start (seen once in ~20 starts of 32 daemons on a loaded 2-core machine: a
# slurmd that died before writing its log). Logged, so a pattern would show.
restart_missing_slurmd() {
    local i
    for (( i = 1; i <= nodes; i++ )); do
        slurmd_pid "$i" >/dev/null && continue
        log "slurmd -N $(node_name "$i") is not running: starting it again"
        slurmd -f "$conf" -N "$(node_name "$i")" || log "slurmd -N $(node_name "$i") failed again"
    done
}

# wait_idle [restart]: with "restart" (right after a start), also start
# again any slurmd that is not running after 15 s.
wait_idle() {
    local deadline=$(( SECONDS + timeout_s )) idle=0 states retried=0
    [[ "${1:-}" == restart ]] || retried=1
    while (( SECONDS < deadline )); do
        if states=$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null); then
            idle=$(awk '$2 == "idle"' <<< "$states" | sort -u | wc -l)
            if (( idle == nodes )); then
                log "all $nodes nodes idle"
                return 0
            fi
        fi
        if (( !retried && SECONDS + timeout_s - deadline >= 15 )); then
            retried=1
            restart_missing_slurmd
        fi
        sleep 1
    done
    log "timeout after ${timeout_s}s: $idle of $nodes nodes idle"
    timeout 10 sinfo 2>&1 || true
    show_logs
    return 1
}

# Show the logs, stop whatever this run started, and fail.
start_failed() {
    show_logs
    cmd_stop || true
    die "$*"
}

start_ctld() {
    local extra=("$@") deadline started=$SECONDS
    slurmctld -f "$conf" "${extra[@]}" || start_failed "slurmctld failed to start"
    deadline=$(( SECONDS + timeout_s ))
    until timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; do
        (( SECONDS < deadline )) \
            || start_failed "slurmctld did not answer scontrol ping within ${timeout_s}s"
        # The daemon writes its pid file at once; gone after that means it died.
        if (( SECONDS - started >= 3 )) && ! ctld_pid >/dev/null; then
            start_failed "slurmctld exited during startup"
        fi
        sleep 0.5
    done
    log "slurmctld up (pid $(ctld_pid))"
}

# auth/slurm clients get their tokens from the daemons' fixed UNIX sockets
# (/run/slurm/sack.socket, /run/slurmctld/sack.socket), and each daemon replaces
# the socket at start: two clusters on one machine break each other's auth.
check_no_other_cluster() {
    local stat comm pid others=""
    for stat in /proc/[0-9]*/stat; do
        pid=${stat#/proc/}; pid=${pid%/stat}
        read -r comm 2>/dev/null < "/proc/$pid/comm" || continue
        case "$comm" in slurmctld|slurmd|slurmdbd|sackd) ;; *) continue ;; esac
        # A zombie holds no socket; skip it.
        [[ "$(awk '{print $3}' "$stat" 2>/dev/null)" == Z ]] && continue
        others+="  pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"$'\n'
    done
    [[ -z "$others" ]] || die "other Slurm daemons run on this machine; only one cluster at a time" \
        "can (auth/slurm shares /run/slurm*/sack.socket). Stop them first:"$'\n'"$others"
}

cmd_start() {
    if [[ -n "$(all_pids)" ]]; then
        log "cluster in $run_dir is running: stopping it first"
        cmd_stop
    fi
    check_no_other_cluster
    check_ports_free
    write_config
    start_ctld -i
    local i
    for (( i = 1; i <= nodes; i++ )); do
        slurmd -f "$conf" -N "$(node_name "$i")" \
            || start_failed "slurmd -N $(node_name "$i") failed to start"
    done
    log "started $nodes slurmd"
    wait_idle restart || { cmd_stop || true; die "cluster did not become idle"; }
}

# Wait until none of the given pids is alive; true when all are gone.
wait_gone() {
    local deadline=$(( SECONDS + $1 )) pid alive
    shift
    while :; do
        alive=0
        for pid in "$@"; do
            if kill -0 "$pid" 2>/dev/null; then alive=1; fi
        done
        (( alive == 0 )) && return 0
        (( SECONDS >= deadline )) && return 1
        sleep 0.2
    done
}

cmd_stop() {
    local pids=() pid
    mapfile -t pids < <(all_pids)
    if [[ ${#pids[@]} -eq 0 ]]; then
        log "nothing running in $run_dir"
        return 0
    fi
    if ctld_pid >/dev/null; then
        timeout 10 scancel --user="$(id -un)" 2>/dev/null || true
        timeout 10 scontrol shutdown 2>/dev/null || true
    fi
    if ! wait_gone 15 "${pids[@]}"; then
        log "some daemons did not stop after scontrol shutdown: SIGTERM"
        for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
        if ! wait_gone 10 "${pids[@]}"; then
            log "SIGKILL to leftovers"
            for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
            wait_gone 5 "${pids[@]}" || die "could not stop pids: ${pids[*]}"
        fi
    fi
    log "stopped (${#pids[@]} daemons)"
}

cmd_status() {
    local i up=0 pid
    if pid=$(ctld_pid); then
        log "slurmctld running (pid $pid)"
    else
        log "slurmctld not running"
    fi
    for (( i = 1; i <= nodes; i++ )); do
        if slurmd_pid "$i" >/dev/null; then up=$(( up + 1 )); fi
    done
    log "slurmd running: $up of $nodes"
    if ctld_pid >/dev/null; then timeout 10 sinfo || true; fi
    ctld_pid >/dev/null && (( up == nodes ))
}

cmd_restart_ctld() {
    local pid
    pid=$(ctld_pid) || die "slurmctld is not running"
    timeout 10 scontrol shutdown slurmctld 2>/dev/null || true
    if ! wait_gone "$timeout_s" "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        wait_gone 10 "$pid" || die "slurmctld (pid $pid) did not stop"
    fi
    log "slurmctld stopped; starting it again (state recovered)"
    start_ctld
}

cmd_env() {
    printf 'export SLURM_CONF=%q\n' "$conf"
    printf 'export PATH=%q:"$PATH"\n' "$prefix/bin:$prefix/sbin"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    wait-idle) wait_idle ;;
    restart-ctld) cmd_restart_ctld ;;
    env) cmd_env ;;
    -h|--help|help) sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
    *) die "usage: $0 start|stop|status|wait-idle|restart-ctld|env" ;;
esac
