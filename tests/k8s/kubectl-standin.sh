#!/bin/sh
# A kubectl stand-in for tests (no cluster here): the verbs the kubernetes
# executor uses, with a Job's pod played by a local process.
#
#   create -f - -o name          reads the manifest; its pod is
#                                containers[0].command run here, in a folder
#                                standing for the emptyDir /workspace, with
#                                only the environment the manifest sets (and
#                                PATH, HOME): what a pod would have
#   get job NAME -o json         the Job in the shape of tests/k8s/states:
#                                active-running, then succeeded (exit 0) or
#                                backoff-limit-exceeded (else)
#   logs job/NAME --tail=-1      the pod's output
#   delete job NAME ...          ends the pod's process group; the Job is gone
#
# Global options --context C and --namespace NS come first (as the executor
# passes them). K8S_FAKE is its folder: jobs/<ns>/<name>/ (manifest.json,
# workspace/, log, exit, pid, started), calls (one line of argv a call), and the
# stdin of the last create (in.json). K8S_STATES: tests/k8s/states. A Job of
# a name that exists (and is not deleted) is refused as the API server does:
# AlreadyExists.
set -u
d=${K8S_FAKE:?}
states=${K8S_STATES:?}
ns=default
while [ $# -gt 0 ]; do
	case $1 in
	--context) shift 2 ;;
	--namespace) ns=$2; shift 2 ;;
	*) break ;;
	esac
done
printf '%s\n' "$*" >>"$d/calls"
verb=${1:-}
notfound() {
	echo "Error from server (NotFound): jobs.batch \"$1\" not found" >&2
	exit 1
}
case $verb in
create)
	in=$(mktemp "$d/in.XXXXXX") && cat >"$in" && mv -f "$in" "$d/in.json.$$" || exit 1
	in="$d/in.json.$$" # its own: creates may run side by side (a tick's workers)
	cp "$in" "$d/in.json"
	name=$(jq -r .metadata.name "$in") || exit 1
	j="$d/jobs/$ns/$name"
	if [ -e "$j" ] && [ ! -e "$j/deleted" ]; then
		rm -f "$in"
		echo "Error from server (AlreadyExists): error when creating \"STDIN\": jobs.batch \"$name\" already exists" >&2
		exit 1
	fi
	rm -rf "$j" && mkdir -p "$j/workspace" && mv "$in" "$j/manifest.json" || exit 1
	jq -r '.spec.template.spec.containers[0].command[2]' "$j/manifest.json" >"$j/script"
	# the pod's environment: the manifest's, /workspace standing for the emptyDir
	jq -r '.spec.template.spec.containers[0].env[] | "\(.name)=\(.value)"' "$j/manifest.json" |
		sed "s|=/workspace\$|=$j/workspace|" >"$j/env"
	# the pod: a process group of its own (setsid), ended as one by delete
	cat >"$j/pod.sh" <<-'EOS'
	j=$1
	: >"$j/started"
	cd "$j/workspace" || exit 1
	# shellcheck disable=SC2046
	env -i PATH="$PATH" HOME="$j/workspace" $(cat "$j/env") sh -c "$(cat "$j/script")" \
		>"$j/log" 2>&1 </dev/null
	echo $? >"$j/exit.tmp" && mv "$j/exit.tmp" "$j/exit"
	EOS
	setsid sh "$j/pod.sh" "$j" </dev/null >/dev/null 2>&1 &
	echo $! >"$j/pid"
	# out of our process group before we exit (the executor may end the group then)
	i=0
	while [ ! -e "$j/started" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
	echo "job.batch/$name"
	;;
get)
	name=${3:-}
	j="$d/jobs/$ns/$name"
	{ [ -e "$j" ] && [ ! -e "$j/deleted" ]; } || notfound "$name"
	if [ ! -e "$j/exit" ]; then s=active-running
	elif [ "$(cat "$j/exit")" = 0 ]; then s=succeeded
	else s=backoff-limit-exceeded; fi
	jq --arg n "$name" --arg ns "$ns" '.metadata.name = $n | .metadata.namespace = $ns' \
		"$states/$s.json"
	;;
logs)
	name=${2#job/}
	j="$d/jobs/$ns/$name"
	{ [ -e "$j" ] && [ ! -e "$j/deleted" ]; } || notfound "$name"
	cat "$j/log"
	;;
delete)
	name=${3:-}
	j="$d/jobs/$ns/$name"
	{ [ -e "$j" ] && [ ! -e "$j/deleted" ]; } || exit 0
	: >"$j/deleted"
	kill -TERM "-$(cat "$j/pid")" 2>/dev/null
	echo "job.batch \"$name\" deleted"
	;;
*)
	echo "kubectl stand-in: '$verb' is not a verb it plays" >&2
	exit 1
	;;
esac
