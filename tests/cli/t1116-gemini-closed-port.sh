#!/bin/sh
# The gemini preset against a model endpoint that refuses connections
# (GOOGLE_GEMINI_BASE_URL on a closed port): the attempt fails at once,
# exit 1, with the endpoint named in builder.log, and gemini is not started
# (issue 25). Before, gemini retried ECONNREFUSED for about 4.5 minutes
# whatever its settings. An endpoint that answers, or a proxy, starts it as
# before (the stand-in of fixtures/agents/standin/, as in t0955).
. "$(dirname "$0")/lib.sh"

test_skip_unless_tool node python3

STANDIN_DIR="$TRASH/standin"
mkdir -p "$STANDIN_DIR"
export STANDIN_DIR
PATH="$FIXTURES/agents/standin:$PATH"
export PATH

# A port of loopback that nothing listens on (bound, then closed).
closed_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

gemini_repo() { # DIR
	test_repo "$1" && (cd "$1" && "$SLUICE" init >/dev/null) &&
	cat >>"$1/.system/config.yaml" <<-EOC
	builder:
	  preset: gemini
	$(approve_reviewer_config)
	EOC
}

test_expect_success 'a closed port: the attempt fails at once naming it, gemini not started' '
	gemini_repo r &&
	wo r G &&
	port=$(closed_port) &&
	GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" sluice -C r tick >out 2>&1 &&
	run=$(run_of r G) &&
	test "$(state_of r $run)" = failed &&
	test_grep "sluice: the model endpoint http://127.0.0.1:$port (GOOGLE_GEMINI_BASE_URL) refuses connections; gemini is not started" r/.system/runs/$run/builder.log &&
	test ! -e "$STANDIN_DIR/gemini.args"
'

test_expect_success 'an endpoint that accepts connections: gemini runs as before' '
	gemini_repo o &&
	wo o G &&
	{ python3 -c "import socket, sys, time; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(8); open(sys.argv[1], \"w\").write(str(s.getsockname()[1])); time.sleep(120)" "$TRASH/port" & } &&
	pid=$! &&
	test_when_finished "kill $pid" &&
	i=0 && while [ ! -s "$TRASH/port" ] && [ $i -lt 6000 ]; do sleep 0.1; i=$((i + 1)); done &&
	GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$(cat "$TRASH/port")" sluice -C o tick >out 2>&1 &&
	test -e "$STANDIN_DIR/gemini.args" &&
	test "$(state_of o $(run_of o G))" = merged
'

test_expect_success 'through a proxy the endpoint is not probed: gemini runs' '
	rm -f "$STANDIN_DIR/gemini.args" &&
	gemini_repo p &&
	wo p G &&
	port=$(closed_port) &&
	HTTPS_PROXY="http://127.0.0.1:1" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" sluice -C p tick >out 2>&1 &&
	test -e "$STANDIN_DIR/gemini.args"
'

test_done
