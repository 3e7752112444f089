# What the benches share (bench/train.sh, batch.sh, replay.sh, tick_ab.sh):
#   . "$here/bench/lib.sh"; bench_setup NAME ARGS-USAGE    (after SLUICE is set)
# refuses an option where the binary goes (with the usage), checks the sluice
# binary (an absolute path in $SLUICE after), makes $work (removed at exit
# unless KEEP=1) with git's identity and a HOME of its own, and gives now_ms,
# secs MS, ratio A B, ticks_while DIR CONDITION and last_landing_ms DIR.

bench_setup() { # NAME ARGS-USAGE
	case $SLUICE in
	-*) echo "usage: bench/$1.sh $2: the comment at the top of" \
		"bench/$1.sh says what it measures and which variables it reads" >&2
	    exit 2 ;;
	esac
	[ -x "$SLUICE" ] || { echo "no sluice binary at $SLUICE" >&2; exit 1; }
	SLUICE=$(cd "$(dirname "$SLUICE")" && pwd)/$(basename "$SLUICE")
	work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-bench-$1.XXXXXX")
	if [ "${KEEP:-0}" = 1 ]; then
		echo "keeping $work" >&2
	else
		trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT INT TERM
	fi
	export GIT_CONFIG_NOSYSTEM=1 HOME="$work" GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@b \
		GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@b
	unset GIT_DIR GIT_WORK_TREE
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f", ms / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# Ticks of DIR back to back while CONDITION (shell code, $1 is DIR) holds, at
# most 15 minutes: then DIR's runs are shown and the bench exits 1.
ticks_while() { # DIR CONDITION
	_t0=$(now_ms)
	while eval "$2"; do
		"$SLUICE" -C "$1" tick >>"$1.ticks" 2>&1 || true
		if [ $(($(now_ms) - _t0)) -gt 900000 ]; then
			echo "$1: not landed in 15 minutes:" >&2
			"$SLUICE" -C "$1" runs >&2
			exit 1
		fi
	done
}

# When DIR's last landing was (ms since the epoch), from its event log.
last_landing_ms() { # DIR
	"$SLUICE" -C "$1" log --json | jq '[.[] | select(.run != null and .to == "merged") | .at_ms] | max'
}
