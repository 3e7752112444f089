#!/usr/bin/env bash
# The test command: install what is missing, build with warnings as errors,
# run the whole suite, then build again with AddressSanitizer and
# UndefinedBehaviorSanitizer and run the suite again.
#
#   ./scripts/test.sh            everything
#   SLUICE_TEST_QUICK=1 ./scripts/test.sh   skip the sanitizer pass
#   SLUICE_TEST_STRESS=1 ./scripts/test.sh  also the stress tests (random kill -9)
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

./scripts/deps.sh

build_and_test() { # DIR CMAKE-ARGS...
	dir=$1
	shift
	echo "== configure $dir $*"
	cmake -S "$root" -B "$dir" -DSLUICE_WERROR=ON "$@" >/dev/null
	echo "== build $dir"
	cmake --build "$dir" -j "$jobs"
	echo "== test $dir"
	(cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 1200)
}

build_and_test build/test -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ "${SLUICE_TEST_QUICK:-0}" != 1 ]; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
	export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	build_and_test build/asan -DCMAKE_BUILD_TYPE=Debug -DSLUICE_SANITIZE=address,undefined
fi
echo "== all tests passed"
