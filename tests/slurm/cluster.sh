#!/bin/sh
# A private one-node Slurm cluster on loopback, everything in one folder DIR:
#
#   tests/slurm/cluster.sh start DIR   # munged, slurmctld, slurmd; waits until the node is idle
#   tests/slurm/cluster.sh env DIR     # the exports a client needs (eval it)
#   tests/slurm/cluster.sh stop DIR    # kills what start started, and the jobs' step daemons
#   tests/slurm/cluster.sh slurmd DIR  # (re)starts slurmd alone (after a test killed it)
#
# For the tests of issue 17 (builders and gates as Slurm jobs). Runs as root
# in a container (SlurmUser=root): no cgroups (proctrack/linuxproc,
# task/none), no accounting database (accounting_storage/none: `sacct` does
# not work; a job's final state is in `scontrol show job` for MinJobAge
# seconds, and in DIR/jobcomp.log, one line a job, from jobcomp/filetxt).
# Nothing outside DIR is written or read but the Slurm and munge binaries: a
# private munge key and socket (AuthInfo=socket=DIR/munge.socket), its own
# state, spool, pid and log files, and two free TCP ports; so several
# clusters (one a test) can run at once. stop kills only the pids in DIR's
# pid files and the slurmstepd processes that hold DIR/slurmd.log open (this
# cluster's step daemons, left running when slurmd is killed), with their job
# processes.
#
# JobRequeue=0: a batch job on a node that dies ends NODE_FAIL, the engine
# does not run it again behind sluice's back (sluice's retry rules decide).
# SlurmdTimeout is short (SLURMD_TIMEOUT, default 10 s) so that a node whose
# slurmd was killed is declared down in under a minute (27-28 s in two runs
# timed by hand; Slurm's default SlurmdTimeout is 300 s).
# SchedulerParameters=batch_sched_delay=0 (SCHEDULER_PARAMETERS; set it empty
# for Slurm's defaults): by default a batch job's scheduling may be put off by
# up to 3 s, which the tests would pay on every job.
#
# Exit status: 0; 1 on an error (the daemons' logs in DIR are printed);
# 77 when a tool is missing or not root (as the tests' skip).
set -u

usage() {
	echo "usage: $0 start|stop|env|slurmd DIR" >&2
	exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
DIR=$2

die() {
	echo "cluster: $*" >&2
	exit 1
}

# the tools a cluster needs; 77 (skip) with the first one missing
need_tools() {
	for t in munged mungekey slurmctld slurmd sinfo scontrol sbatch squeue scancel python3; do
		if ! command -v "$t" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$t" ]; then
			echo "cluster: $t not installed (scripts/deps.sh installs slurm-wlm and munge)" >&2
			exit 77
		fi
	done
	if [ "$(id -u)" -ne 0 ]; then
		echo "cluster: not root (the daemons run as root here: SlurmUser=root)" >&2
		exit 77
	fi
}

# two free TCP ports on this host, one a line (closed again before slurm binds
# them: another process may take one in between; start then fails and retries)
free_ports() {
	python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("", 0))
print("\n".join(str(x.getsockname()[1]) for x in s))
'
}

# the node's memory in MB, halved (other sessions share the machine)
node_memory() {
	awk '/^MemTotal:/ { m = int($2 / 1024 / 2); if (m < 256) m = 256; print m }' /proc/meminfo
}

write_conf() { # CTLD-PORT SLURMD-PORT
	cat >"$DIR/slurm.conf" <<-EOF
	# written by tests/slurm/cluster.sh: a private one-node cluster
	ClusterName=sluicetest
	SlurmctldHost=localhost
	SlurmctldPort=$1
	SlurmdPort=$2
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	AuthInfo=socket=$DIR/munge.socket
	CredType=cred/munge
	StateSaveLocation=$DIR/state
	SlurmdSpoolDir=$DIR/spool
	SlurmctldPidFile=$DIR/slurmctld.pid
	SlurmdPidFile=$DIR/slurmd.pid
	SlurmctldLogFile=$DIR/slurmctld.log
	SlurmdLogFile=$DIR/slurmd.log
	SlurmctldDebug=info
	SlurmdDebug=info
	ProctrackType=proctrack/linuxproc
	TaskPlugin=task/none
	SwitchType=switch/none
	MpiDefault=none
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core
	AccountingStorageType=accounting_storage/none
	JobAcctGatherType=jobacct_gather/none
	JobCompType=jobcomp/filetxt
	JobCompLoc=$DIR/jobcomp.log
	JobRequeue=0
	ReturnToService=2
	MinJobAge=600
	SlurmdTimeout=${SLURMD_TIMEOUT:-10}
	SlurmctldTimeout=30
	InactiveLimit=0
	KillWait=5
	NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$(node_memory) State=UNKNOWN
	PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
	EOF
	sp=${SCHEDULER_PARAMETERS-batch_sched_delay=0}
	[ -z "$sp" ] || echo "SchedulerParameters=$sp" >>"$DIR/slurm.conf"
}

# the exports of a client (sbatch, squeue, scontrol, sinfo, scancel)
print_env() {
	echo "export SLURM_CONF='$DIR/slurm.conf'"
}

pid_alive() { # PIDFILE
	[ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null
}

show_logs() {
	for f in munged.log slurmctld.log slurmd.log slurmctld.out slurmd.out; do
		[ -f "$DIR/$f" ] || continue
		echo "--- $DIR/$f (last 30 lines)" >&2
		tail -n 30 "$DIR/$f" >&2
	done
}

start_munge() {
	[ -f "$DIR/munge.key" ] || mungekey --create --keyfile="$DIR/munge.key" >/dev/null ||
		die "mungekey failed"
	chmod 600 "$DIR/munge.key"
	# --force: as root, and the folders above DIR (/tmp) are writable by others
	munged --force --socket="$DIR/munge.socket" --key-file="$DIR/munge.key" \
		--pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" \
		--seed-file="$DIR/munged.seed" >"$DIR/munged.out" 2>&1 ||
		{ cat "$DIR/munged.out" >&2; return 1; }
	i=0
	while [ ! -S "$DIR/munge.socket" ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$DIR/munge.socket" ]
}

start_slurmd() {
	setsid slurmd -f "$DIR/slurm.conf" -N localhost \
		</dev/null >"$DIR/slurmd.out" 2>&1
}

# wait (at most START_WAIT seconds, default 300: a guard against a hang) until sinfo shows the node idle
wait_idle() {
	i=0
	lim=$((${START_WAIT:-300} * 5))
	while [ $i -lt "$lim" ]; do
		st=$(SLURM_CONF="$DIR/slurm.conf" sinfo -h -N -n localhost -o %T 2>/dev/null)
		[ "$st" = idle ] && return 0
		pid_alive "$DIR/slurmctld.pid" || [ $i -lt 25 ] || return 1
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

start() {
	need_tools
	mkdir -p "$DIR" || die "cannot create $DIR"
	DIR=$(cd "$DIR" && pwd -P)
	pid_alive "$DIR/slurmctld.pid" && die "a cluster is running in $DIR already"
	mkdir -p "$DIR/state" "$DIR/spool"
	chmod 700 "$DIR"
	start_munge || { show_logs; die "munged did not start"; }
	attempt=0
	while [ $attempt -lt 3 ]; do
		attempt=$((attempt + 1))
		ports=$(free_ports) || die "no free ports"
		# shellcheck disable=SC2086
		write_conf $ports
		setsid slurmctld -f "$DIR/slurm.conf" -i </dev/null >"$DIR/slurmctld.out" 2>&1
		start_slurmd
		if wait_idle; then
			print_env
			return 0
		fi
		# a port taken in between, or a slow start: kill, show, try again
		echo "cluster: attempt $attempt: the node is not idle:" >&2
		SLURM_CONF="$DIR/slurm.conf" sinfo -N -l >&2 2>&1 || true
		show_logs
		kill_daemons
	done
	stop_munge
	die "the cluster in $DIR did not start"
}

# TERM to the pids of the pid files given, at once; KILL to those still there 5 s later
kill_pidfiles() { # PIDFILE...
	ps_=""
	for f in "$@"; do
		pid_alive "$f" && ps_="$ps_ $(cat "$f")" && kill -TERM "$(cat "$f")" 2>/dev/null
	done
	i=0
	for p in $ps_; do
		while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		kill -KILL "$p" 2>/dev/null
	done
	rm -f "$@"
}

# the pids of the processes that hold DIR/slurmd.log open but are not the
# slurmd of the pid file: this cluster's step daemons (slurmstepd inherits
# slurmd's log; it overwrites its environment with its title, so no marker
# there), which outlive a slurmd killed with -9. One find reads every open
# file's target (a readlink a file took 6 s of each stop on a loaded
# machine with 700 open files, issue 29).
stepd_pids() {
	find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -type l -printf '%p %l\n' 2>/dev/null |
		awk -v want="$DIR/slurmd.log" -v slurmd="$(cat "$DIR/slurmd.pid" 2>/dev/null)" '
			substr($0, index($0, " ") + 1) == want {
				split($1, f, "/")
				if (f[3] != slurmd) print f[3]
			}' | sort -u
}

# a process and all its descendants, children first
tree() { # PID
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		tree "$c"
	done
	echo "$1"
}

kill_daemons() {
	kill_pidfiles "$DIR/slurmd.pid" "$DIR/slurmctld.pid"
	# step daemons that outlive slurmd (kill -9 of slurmd leaves them), and their jobs
	for p in $(stepd_pids); do
		for q in $(tree "$p"); do
			kill -KILL "$q" 2>/dev/null
		done
	done
}

stop_munge() {
	kill_pidfiles "$DIR/munged.pid"
}

stop() {
	[ -d "$DIR" ] || return 0
	DIR=$(cd "$DIR" && pwd -P)
	kill_daemons
	stop_munge
	return 0
}

case "$cmd" in
start) start ;;
stop) stop ;;
env)
	DIR=$(cd "$DIR" && pwd -P) || exit 1
	print_env
	;;
slurmd)
	need_tools
	DIR=$(cd "$DIR" && pwd -P) || exit 1
	start_slurmd || die "slurmd did not start"
	;;
*) usage ;;
esac
