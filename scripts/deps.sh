#!/usr/bin/env bash
# Install, with apt-get, exactly the Debian packages sluice needs to build and
# test that are not installed yet (clang and its runtimes, libclang_rt.fuzzer
# among them, for the fuzz targets). Runs apt-get update first, and only when
# something is missing. Uses sudo when not root. Then the real agent CLIs
# (scripts/agents.sh: npm, into build/agents, for the preset tests) and
# puppeteer-core (scripts/browser.sh: npm, into build/browser, for the browser
# tests of sluice serve, which drive the chromium installed here).
# The executor tests (issue 17) need a one-node Slurm (slurm-wlm: slurmctld,
# slurmd, slurm-client; munge) and kubectl (Debian's kubernetes-client, unless
# a kubectl is installed already: another package's /usr/bin/kubectl, such as
# Google's kubectl package, would clash with it).
set -eu

packages="build-essential cmake pkg-config git
libgit2-dev libsqlite3-dev libcurl4-openssl-dev libyaml-dev libjansson-dev
libssl-dev uuid-dev libcmocka-dev libmicrohttpd-dev sqlite3 curl
python3 python3-jsonschema python3-yaml
clang libclang-rt-dev procps jq groff-base graphviz
dpkg-dev file man-db lintian logrotate
chromium
slurm-wlm slurmctld slurmd slurm-client munge"
command -v kubectl >/dev/null 2>&1 || packages="$packages kubernetes-client"

missing=""
for p in $packages; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $p" ;;
	esac
done

# the real agent CLIs of the preset tests, from the npm registry, into build/agents
# and puppeteer-core for the browser tests, into build/browser
agents() {
	"$(dirname "$0")/agents.sh"
	"$(dirname "$0")/browser.sh"
}

if [ -z "$missing" ]; then
	echo "deps: all build and test dependencies are installed"
	agents
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: apt-get is not available here; install them with your package manager and run again" >&2
	exit 1
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo="sudo"
	else
		echo "deps: missing packages:$missing" >&2
		echo "deps: not root and no sudo; run as root: apt-get install$missing" >&2
		exit 1
	fi
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
agents
