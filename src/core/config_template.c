/*
 * The builder presets and the commented config.yaml that `sluice init`
 * writes (core/config.h).
 */
#include "core/config.h"
#include "core/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- presets and the template of `sluice init` ------------------------- */

/*
 * Non-interactive invocations of common agent CLIs (checked against their
 * documentation, see docs/config.md). The prompt is in $SLUICE_PROMPT_FILE;
 * CLIs that want it as an argument read it through `sh -c`.
 */
static const struct {
	const char *name;
	const char *programs; /* the programs its script runs from PATH (`sluice check`) */
	const char *script;
} preset_table[] = {
        /*
         * The prompt on standard input (one argument is capped at 128 KiB),
         * the final answer kept in $SLUICE_SUMMARY_FILE and in the log, the
         * gates and git's read commands allowed (docs/agents.md). Claude Code
         * matches `a && b` (also ||, ;, |) part by part (a rule for the whole
         * misses when a part holds parentheses), an agent runs a part alone,
         * and `sh -c '...'` is refused whatever the rules: every part of a
         * gate is allowed too (t0960). Each new session gets its id
         * (--session-id, kept in the run folder) so that session: keep can
         * --resume it: `-p --continue` of 2.1.100 starts a new conversation
         * (t1023). A run's budget in dollars (docs/budgets.md) gives what
         * is left to --max-budget-usd. The CLI's JSON result (kept as
         * claude-result.json) gives the summary (its `result`; the JSON
         * itself when it has none, an error) and what the attempt used
         * ($SLUICE_USAGE_FILE: its usage, total_cost_usd, the model that
         * cost most), read with node (npm's Claude Code runs on it); without
         * node, or when the attempt is killed at its timeout, nothing is
         * recorded and the summary is the JSON.
         */
        {"claude-code", "claude",
         "f=\"$SLUICE_RUN_DIR/claude-session\"; id=$(cat \"$f\" 2>/dev/null); "
         "case $id in *[!0-9a-f-]*) id= ;; esac; "
         "if [ \"$SLUICE_SESSION\" = keep ] && [ -n \"$id\" ]; then r=\"--resume $id\"; else "
         "id=$(cat /proc/sys/kernel/random/uuid); echo \"$id\" >\"$f\"; r=\"--session-id $id\"; fi; "
         "set -f; IFS='\n'; set --; for c in $SLUICE_GATE_COMMANDS $(printf '%s\\n' "
         "\"$SLUICE_GATE_COMMANDS\" | awk '{gsub(/ *(&&|[|][|]|;|[|]) */, \"\\n\"); print}'); "
         "do set -- \"$@\" \"Bash($c)\"; done; "
         "unset IFS; b=; [ -n \"$SLUICE_BUDGET_USD\" ] && b=\"--max-budget-usd $SLUICE_BUDGET_USD\"; "
         "o=\"$SLUICE_RUN_DIR/claude-result.json\"; "
         "claude -p $r $b --output-format json --permission-mode acceptEdits "
         "--allowedTools Read Edit Write Glob Grep 'Bash(git status:*)' 'Bash(git diff:*)' "
         "'Bash(git log:*)' 'Bash(git show:*)' \"$@\" <\"$SLUICE_PROMPT_FILE\" >\"$o\"; rc=$?; "
         "cp \"$o\" \"$SLUICE_SUMMARY_FILE\"; "
         "if command -v node >/dev/null; then node -e 'const fs=require(\"fs\"),a=process.argv;"
         "let r;try{r=JSON.parse(fs.readFileSync(a[1],\"utf8\"))}catch(e){process.exit(0)}"
         "if(!r||typeof r!==\"object\")process.exit(0);const s=String(r.result??\"\");"
         "if(s)fs.writeFileSync(a[2],s.endsWith(\"\\n\")?s:s+\"\\n\");"
         "const u=r.usage||{},n=v=>typeof v===\"number\"?v:undefined;"
         "const m=Object.entries(r.modelUsage||{}).sort((x,y)=>(y[1].costUSD||0)-(x[1].costUSD||0));"
         "fs.writeFileSync(a[3],JSON.stringify({input_tokens:n(u.input_tokens),"
         "output_tokens:n(u.output_tokens),cache_read_tokens:n(u.cache_read_input_tokens),"
         "cache_write_tokens:n(u.cache_creation_input_tokens),cost_usd:n(r.total_cost_usd),"
         "model:m.length?m[0][0]:undefined})+\"\\n\")' "
         "\"$o\" \"$SLUICE_SUMMARY_FILE\" \"$SLUICE_USAGE_FILE\"; "
         "else echo 'sluice: no node on the PATH: the usage Claude Code reported is not "
         "recorded' >&2; fi; cat \"$SLUICE_SUMMARY_FILE\"; exit $rc"},
        /*
         * codex's JSON events (--json) go through node: its messages, commands
         * and file changes are printed as text for the log, and at each
         * turn's end its usage goes to $SLUICE_USAGE_FILE (docs/budgets.md).
         * codex reports the thread's running total, which `exec resume`
         * carries on: the total this run's last attempt saw of the same
         * thread (codex-usage-total.json in the run folder) is taken off.
         * Input tokens are less the cached ones. The model is read from
         * codex's own session file of the thread ($CODEX_HOME/sessions/Y/M/D/
         * rollout-*-<thread>.jsonl of today or yesterday, its turn_context),
         * when found. Without node, codex runs as before and nothing is
         * recorded. session: keep resumes the newest session of the worktree
         * (codex picks the session of the current directory); `exec resume`
         * has no --sandbox, its config key says the same.
         */
        {"codex", "codex",
         "if [ \"$SLUICE_SESSION\" = keep ]; then "
         "set -- exec resume --last -c 'sandbox_mode=\"workspace-write\"'; "
         "else set -- exec --sandbox workspace-write; fi; "
         "set -- \"$@\" --skip-git-repo-check --output-last-message \"$SLUICE_SUMMARY_FILE\"; "
         "if ! command -v node >/dev/null; then echo 'sluice: no node on the PATH: the usage "
         "codex reports is not recorded' >&2; exec codex \"$@\" - <\"$SLUICE_PROMPT_FILE\"; fi; "
         "r=\"$SLUICE_RUN_DIR/codex.rc\"; rm -f \"$r\"; "
         "{ codex \"$@\" --json - <\"$SLUICE_PROMPT_FILE\"; echo $? >\"$r\"; } | node -e '"
         "const fs=require(\"fs\"),p=require(\"path\"),f=process.argv[1],sf=process.argv[2];let u,"
         "b=\"\",tid,base={},tot;const out=s=>process.stdout.write(s.endsWith(\"\\n\")?s:s+\"\\n\");co"
         "nst model=()=>{if(!tid)return;const h=process.env.CODEX_HOME||p.join(require(\"os\").h"
         "omedir(),\".codex\"),n=new Date(),m=[];for(const t of[n,new Date(n-864e5)])for(const d"
         " of[[t.getFullYear(),t.getMonth(),t.getDate()],[t.getUTCFullYear(),t.getUTCMonth(),t"
         ".getUTCDate()]]){const dir=p.join(h,\"sessions\",String(d[0]),String(d[1]+1).padStart("
         "2,\"0\"),String(d[2]).padStart(2,\"0\"));let l=[];try{l=fs.readdirSync(dir)}catch(e){}fo"
         "r(const x of l)if(x.endsWith(\"-\"+tid+\".jsonl\")){try{for(const r of fs.readFileSync(p"
         ".join(dir,x),\"utf8\").split(\"\\n\")){try{const e=JSON.parse(r);if(e.type===\"turn_contex"
         "t\"&&e.payload&&typeof e.payload.model===\"string\")m.push(e.payload.model)}catch(e){}}"
         "}catch(e){}return m.pop()}}};const put=()=>{if(!u)return;try{const m=model();if(m)u."
         "model=m;fs.writeFileSync(f+\".tmp\",JSON.stringify(u)+\"\\n\");fs.renameSync(f+\".tmp\",f);"
         "fs.writeFileSync(sf,JSON.stringify({thread:tid,total:tot})+\"\\n\")}catch(e){console.er"
         "ror(\"sluice: cannot write the usage codex reported: \"+e.message)}};const line=l=>{le"
         "t e;try{e=JSON.parse(l)}catch(x){e=null}if(!e||typeof e!==\"object\"){if(l.trim())out("
         "l);return}const i=e.item||{};if(e.type===\"thread.started\"){tid=e.thread_id;try{const"
         " s=JSON.parse(fs.readFileSync(sf,\"utf8\"));if(s.thread===tid&&s.total)base=s.total}ca"
         "tch(x){}}else if(e.type===\"turn.completed\"&&e.usage){const n=(o,k)=>typeof o[k]===\"n"
         "umber\"?o[k]:0,g=e.usage,d=k=>Math.max(n(g,k)-n(base,k),0);tot=g;u={input_tokens:d(\"i"
         "nput_tokens\")-d(\"cached_input_tokens\"),output_tokens:d(\"output_tokens\"),cache_read_t"
         "okens:d(\"cached_input_tokens\"),cache_write_tokens:d(\"cache_write_input_tokens\")};if("
         "u.input_tokens<0)u.input_tokens=0;put()}else if(e.type===\"item.completed\"){if(i.type"
         "===\"agent_message\"||i.type===\"reasoning\")out(String(i.text??\"\"));else if(i.type===\"c"
         "ommand_execution\")out(\"$ \"+i.command+\"\\n\"+(i.aggregated_output??\"\")+\"(exit \"+i.exit_"
         "code+\")\");else if(i.type===\"file_change\")out(\"apply_patch: \"+(i.changes||[]).map(c=>"
         "c.kind+\" \"+c.path).join(\", \"));else out(JSON.stringify(i))}else if(e.type===\"turn.fa"
         "iled\"||e.type===\"error\")out(\"error: \"+(e.error?.message??e.message??l))};process.std"
         "in.setEncoding(\"utf8\").on(\"data\",d=>{b+=d;let k;while((k=b.indexOf(\"\\n\"))>=0){line(b"
         ".slice(0,k));b=b.slice(k+1)}}).on(\"end\",()=>{if(b)line(b);put()});"
         "' \"$SLUICE_USAGE_FILE\" \"$SLUICE_RUN_DIR/codex-usage-total.json\"; "
         "rc=$(cat \"$r\" 2>/dev/null); exit \"${rc:-1}\""},
        {"aider", "aider",
         "exec aider --yes-always --no-check-update --message-file \"$SLUICE_PROMPT_FILE\""},
        /*
         * gemini prints in text output what the model says before each tool
         * call too: its JSON output's "response" is the last turn's text
         * alone, taken out with node (which runs gemini itself). An endpoint
         * of GOOGLE_GEMINI_BASE_URL that refuses connections is said at once
         * (exit 1): gemini retries ECONNREFUSED whatever its settings
         * (general.maxAttempts, retryFetchErrors), about 4.5 minutes. Not
         * through a proxy, and a probe that cannot tell (a timeout, DNS)
         * leaves it to gemini (docs/agents.md). The JSON's stats give what
         * the attempt used ($SLUICE_USAGE_FILE: the tokens of every model
         * summed, the model with the most of them; no cost, which
         * budget.prices can estimate).
         */
        {"gemini", "gemini node",
         "if [ -n \"$GOOGLE_GEMINI_BASE_URL\" ] && "
         "[ -z \"$HTTPS_PROXY$https_proxy$HTTP_PROXY$http_proxy$ALL_PROXY$all_proxy\" ]; then "
         "node -e 'const u=new URL(process.argv[1]),net=require(\"net\");"
         "const s=net.connect({host:u.hostname.replace(/^\\[|\\]$/g,\"\"),"
         "port:u.port||(u.protocol===\"http:\"?80:443),timeout:10000});"
         "const go=()=>{s.destroy();process.exit(0)};s.on(\"connect\",go);s.on(\"timeout\",go);"
         "s.on(\"error\",e=>{if(e.code!==\"ECONNREFUSED\")go();"
         "console.error(\"sluice: the model endpoint \"+u.origin+\" (GOOGLE_GEMINI_BASE_URL) \"+"
         "\"refuses connections; gemini is not started (it would retry for minutes)\");"
         "process.exit(1)})' \"$GOOGLE_GEMINI_BASE_URL\" || exit 1; fi; "
         "r=; [ \"$SLUICE_SESSION\" = keep ] && r='--resume latest'; "
         "o=\"$SLUICE_RUN_DIR/gemini-result.json\"; "
         "GEMINI_CLI_TRUST_WORKSPACE=true gemini $r --approval-mode=yolo --output-format json "
         "<\"$SLUICE_PROMPT_FILE\" >\"$o\"; rc=$?; cp \"$o\" \"$SLUICE_SUMMARY_FILE\"; "
         "node -e 'const fs=require(\"fs\"),a=process.argv;let r;"
         "try{r=JSON.parse(fs.readFileSync(a[1],\"utf8\"))}catch(e){process.exit(0)}"
         "const s=String(r.response??r.error?.message??\"\");"
         "fs.writeFileSync(a[2],s&&!s.endsWith(\"\\n\")?s+\"\\n\":s);"
         "const m=Object.entries(r.stats?.models||{});if(!m.length)process.exit(0);"
         "let i=0,o=0,c=0,top=m[0];for(const e of m){const t=e[1].tokens||{};"
         "i+=(t.input!=null?t.input:(t.prompt||0)-(t.cached||0))||0;o+=(t.candidates||0)+(t.thoughts||0);"
         "c+=t.cached||0;if((t.total||0)>(top[1].tokens?.total||0))top=e}"
         "fs.writeFileSync(a[3],JSON.stringify({input_tokens:i,output_tokens:o,"
         "cache_read_tokens:c,model:top[0]})+\"\\n\")' "
         "\"$o\" \"$SLUICE_SUMMARY_FILE\" \"$SLUICE_USAGE_FILE\"; "
         "cat \"$SLUICE_SUMMARY_FILE\"; exit $rc"},
        {NULL, NULL, NULL},
};

const char *sl_config_preset_programs(const char *name)
{
	int i;

	for (i = 0; preset_table[i].name && strcmp(preset_table[i].name, name); i++)
		;
	return preset_table[i].programs;
}

int sl_config_preset_known(const char *name)
{
	int i;

	for (i = 0; preset_table[i].name && strcmp(preset_table[i].name, name); i++)
		;
	return preset_table[i].name != NULL;
}

int sl_config_preset_resumes(const char *name)
{
	/* their resume flags: claude --resume <id>, codex exec resume --last, gemini --resume */
	return name && (!strcmp(name, "claude-code") || !strcmp(name, "codex") ||
			!strcmp(name, "gemini"));
}

int sl_config_preset(sl_strv *out, const char *preset, struct sl_err *err)
{
	sl_strv v = NULL;
	int i;

	*out = NULL;
	for (i = 0; preset_table[i].name && strcmp(preset_table[i].name, preset); i++)
		;
	if (!preset_table[i].name)
		return sl_err_set(
		        err, SL_ENOTFOUND,
		        "unknown builder preset '%s'; use claude-code, codex, aider or gemini",
		        preset);
	if (sl_strv_push(&v, "sh") < 0 || sl_strv_push(&v, "-c") < 0 ||
	    sl_strv_push(&v, preset_table[i].script) < 0) {
		sl_strv_free(v);
		return sl_err_set(err, SL_ERROR, "out of memory");
	}
	*out = v;
	return 0;
}

static const char config_template[] =
        "# sluice configuration (see docs/config.md and schema/config.schema.json).\n"
        "# Every key is optional but the builder, which is needed to build (not to\n"
        "# load or check). Commented-out values are the defaults.\n"
        "\n"
        "# The branch that approved runs are merged into.\n"
        "target: %s\n"
        "\n"
        "queue:\n"
        "  # Where work orders are dropped: *.md files, searched recursively.\n"
        "  inbox: %s\n"
        "  # Builders run in parallel by one tick.\n"
        "  # jobs: 2\n"
        "  # Build work orders whose context paths overlap at the same time.\n"
        "  # allow_overlap: false\n"
        "  # Two runs that change the same file: 'resolve' merges the later one\n"
        "  # (conflicts go to resolution); 'fatal' fails the later one instead.\n"
        "  # overlap: resolve\n"
        "\n"
        "# The builder: the agent that does the work in the run's worktree. Set\n"
        "# either a command (an argv list; write [sh, -c, '...'] for a shell) or a\n"
        "# preset: claude-code, codex, gemini, aider (docs/agents.md). It gets\n"
        "# $SLUICE_PROMPT_FILE, $SLUICE_SUMMARY_FILE, $SLUICE_RUN_DIR, $SLUICE_WORK_ORDER_ID,\n"
        "# $SLUICE_MODE, $SLUICE_ATTEMPT, $SLUICE_GATE_COMMANDS and $SLUICE_USAGE_FILE\n"
        "# (where it may write what it used: docs/budgets.md); with a budget in\n"
        "# dollars $SLUICE_BUDGET_USD says what the run may still spend.\n"
        "# builder:\n"
        "#   preset: claude-code\n"
        "#   command: [sh, -c, 'my-agent --prompt-file \"$SLUICE_PROMPT_FILE\"']\n"
        "#   timeout: 30m\n"
        "#   env:\n"
        "#     MY_VARIABLE: value\n"
        "#   log_max: 10MiB\n"
        "#   agent: fast      # or: which of the named builders below builds\n"
        "\n"
        "# Named builders, for builder.agent and a retry rule's 'agent:' (escalation\n"
        "# from a fast agent to a strong one; docs/config.md \"Named builders\").\n"
        "# builders:\n"
        "#   fast: {preset: codex}\n"
        "#   strong:\n"
        "#     preset: claude-code\n"
        "#     timeout: 1h\n"
        "#     env: {ANTHROPIC_MODEL: claude-opus-4-6}\n"
        "\n"
        "# worktree:\n"
        "#   share: []         # paths symlinked from the main checkout (node_modules)\n"
        "#   copy: []          # paths copied from the main checkout (.env)\n"
        "#   setup: [npm, ci]  # run in a new worktree, after creation\n"
        "#   setup_timeout: 10m\n"
        "#   hooks: off        # on: let the builder's git commits run the repository's hooks\n"
        "#   pool: 2           # finished worktrees kept for new runs (0: none; docs/config.md)\n"
        "#   recycle: clean    # keep-ignored: node_modules/, build/ stay from run to run\n"
        "#   keep_failed: on   # off: a failed run's worktree goes to the pool (its work is on its branch);\n"
        "#                     # on: within gc.keep_failed and gc.keep_failed_for\n"
        "#   mode: read-write  # read-only or none: reviews and audits, a report, no merge\n"
        "\n"
        "# Gates: named commands run in the worktree after each build. A failing\n"
        "# gate fails the attempt (see retry).\n"
        "# gates:\n"
        "#   test: [make, test]\n"
        "#   lint:\n"
        "#     command: [make, lint]\n"
        "#     timeout: 10m\n"
        "\n"
        "# Retry rules: without them a failed gate or a request for changes is\n"
        "# final. Each entry has one condition (attempt: N from attempt N on,\n"
        "# not: gate.NAME when that gate failed, exit: N to stop at attempt N) and\n"
        "# sticky overrides (builder or agent: a named builder or a preset, session:\n"
        "# new or keep to resume the agent's own session, prompt, worktree: reset).\n"
        "# 'exit' is required.\n"
        "# retry:\n"
        "#   - not: gate.test\n"
        "#     prompt: |\n"
        "#       The tests failed:\n"
        "#       {gate.test.output}\n"
        "#       Fix them. The work order: {work_order.title}\n"
        "#   - attempt: 3\n"
        "#     worktree: reset\n"
        "#   - exit: 4\n"
        "\n"
        "# reviewer:\n"
        "#   mode: manual          # manual (sluice approve/reject), http or command\n"
        "#   url: http://127.0.0.1:8080/review\n"
        "#   protocol: sluice      # sluice or openai (chat completions)\n"
        "#   model: my-model       # openai protocol: the model name\n"
        "#   token_env: REVIEWER_TOKEN  # variable holding the bearer token\n"
        "#   timeout: 120s\n"
        "#   connect_timeout: 10s\n"
        "#   retries: 3\n"
        "#   command: [my-reviewer]  # command mode: gets the request on stdin\n"
        "#   max_reply: 1MiB\n"
        "#   name: my-reviewer     # for the Reviewed-by: trailer\n"
        "\n"
        "# merge:\n"
        "#   resolver: builder     # builder (let the builder resolve conflicts) or none\n"
        "#   resolve_attempts: 2\n"
        "#   gates: [test]         # gates run on each merge before it lands; default: all, []: none\n"
        "#   train_depth: 2        # merges tested at once in the merge train; default: jobs below\n"
        "#   jobs: 2               # a tick's workers for the train, apart from queue.jobs' builders\n"
        "#   batch: 1              # approved cars tested as one chain; a red one is bisected\n"
        "#   rerun_failed: 1       # a red merge gate runs again on the same tree before blame\n"
        "#   reuse_green: true     # a merge gate green on the car's tree is not run again\n"
        "#   reuse_gating: false   # nor one the run's own gates passed there (clean worktree)\n"
        "#   keep_ignored: [node_modules/]  # ignored paths the merge gates' clean checkout keeps\n"
        "#   freeze:               # windows in which nothing lands (the train keeps testing)\n"
        "#     - {days: [sat, sun], from: \"00:00\", to: \"24:00\", tz: UTC, reason: weekend}\n"
        "#   lanes:                # lines of their own by paths, each with its own gates\n"
        "#     - {name: web, paths: [\"web/**\"], gates: [test]}\n"
        "#   message: \"Merge {work_order.id}: {work_order.title}\"\n"
        "\n"
        "# What agents may spend, in US dollars (docs/budgets.md): once the cost\n"
        "# recorded today (UTC) or this month reaches it, no new work order starts.\n"
        "# A run stops starting attempts once its own recorded that much or ran\n"
        "# that many minutes (a work order's budget: {usd, minutes} wins).\n"
        "# budget:\n"
        "#   day: {usd: 40}\n"
        "#   month: {usd: 600}\n"
        "#   run: {usd: 5, minutes: 45}\n"
        "#   prices:    # a cost from tokens, per million, where the agent says none\n"
        "#     claude-sonnet-4-6: {input: 3, output: 15, cache_read: 0.30}\n"
        "\n"
        "# Watch gates: slow suites run on the target's tip, not on each merge, by\n"
        "# 'sluice watch' (cron) or a tick; a red one is bisected to its landing,\n"
        "# which is reverted through the train, its work order given a fix-up\n"
        "# (docs/watch.md).\n"
        "# watch:\n"
        "#   gates:\n"
        "#     e2e: [make, e2e]\n"
        "#   every: 5              # a tick watches after 5 landings (0: only sluice watch)\n"
        "#   revert_review: person # person or auto (an exact revert): who approves a revert\n"
        "\n"
        "# Who the merge and snapshot commits sluice makes are by; default: git's\n"
        "# user.name and user.email for this repository, else sluice <sluice@localhost>.\n"
        "# commit:\n"
        "#   name: Release Bot\n"
        "#   email: release-bot@example.com\n"
        "\n"
        "# gc:\n"
        "#   keep_last: 20         # finished runs kept by 'sluice gc'\n"
        "#   keep_failed: 5        # failed runs' worktrees kept (the newest; folders and branches stay)\n"
        "#   keep_failed_for: 7d   # and none older than this\n"
        "\n"
        "# Notifications: each run that lands (merged) or ends in merge_conflict,\n"
        "# rejected or failed is told, as one JSON object (schema/notify-event.schema.json),\n"
        "# to the command (on its stdin) and to the URL (POSTed), at the end of the\n"
        "# tick. A notifier that fails or hangs never holds the queue up.\n"
        "# notify:\n"
        "#   command: [sh, -c, 'cat >>.system/events.jsonl']  # exit 0: delivered\n"
        "#   url: https://hooks.example.com/sluice  # a 2xx: delivered\n"
        "#   timeout: 10s          # each delivery (a command is killed after it)\n"
        "#   retry_for: 24h        # a failed delivery is tried again, 30s, 1m, 2m... 1h\n"
        "#                         # apart, until this long after the event; then given up\n"
        "\n"
        "# Builders, gates and the merge train's gates as jobs on Slurm or Kubernetes\n"
        "# (docs/scale-out.md); the queue, the review and every landing stay here.\n"
        "# executor:\n"
        "#   kind: local           # local (here, the default), slurm or kubernetes\n"
        "#   remote: ssh://build-host/srv/project.git  # a git remote here and the workers reach\n"
        "#   poll: 2s              # how often the engine is asked\n"
        "#   slurm: {partition: build, cpus: 4, memory: 8G}\n"
        "#   kubernetes: {namespace: agents, image: registry.example.com/agent:1}\n";

static int yaml_plain_safe(const char *s)
{
	const char *p;

	if (!*s || strchr("-?:,[]{}#&*!|>'\"%@` ", *s))
		return 0;
	for (p = s; *p; p++)
		if (strchr(":#'\"\\\n\t", *p) || (unsigned char)*p < 0x20)
			return 0;
	return p[-1] != ' ';
}

static char *yaml_quote(const char *s)
{
	struct sl_buf b = SL_BUF_INIT;

	if (yaml_plain_safe(s))
		return strdup(s);
	sl_buf_puts(&b, "'");
	for (; *s; s++)
		if (*s == '\'' ? sl_buf_puts(&b, "''") : sl_buf_add(&b, s, 1)) {
			sl_buf_release(&b);
			return NULL;
		}
	if (sl_buf_puts(&b, "'")) {
		sl_buf_release(&b);
		return NULL;
	}
	return sl_buf_detach(&b);
}

char *sl_config_template(const char *target, const char *inbox)
{
	char *t = yaml_quote(target ? target : "main");
	char *i = yaml_quote(inbox ? inbox : "work_orders");
	char *out = NULL;

	if (t && i && asprintf(&out, config_template, t, i) < 0)
		out = NULL;
	free(t);
	free(i);
	return out;
}
