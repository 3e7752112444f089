"""The demo's scripted agent as a plan of edits, for fake_model.py's
protocol modules (scripts/demo.sh with DEMO_BUILDER=claude-code).

demo_plan(text) finds the builder whose work order is in the request's
text, runs the work order's ```agent (or ```resolve) block in a scratch copy
of its worktree, and returns the difference as edits for the CLI's own
tools to make in the real worktree: the model decides, the CLI acts.
"""
import os


def builder_of(text):
    """The builder process whose prompt file's work order is in `text`:
    (pid, environment dict, cwd), or None. `text` is the request's body."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue
        if b"SLUICE_PROMPT_FILE" not in env or b"SLUICE_RUN_ID" not in env:
            continue
        env = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in env.items()}
        try:
            with open(env["SLUICE_PROMPT_FILE"], encoding="utf-8", errors="replace") as f:
                prompt = f.read()
        except OSError:
            continue
        # the work order's id line is in the prompt (JSON-escaped in the request)
        key = "id: %s" % env.get("SLUICE_WORK_ORDER_ID", "")
        if key in text:
            return int(pid), env, cwd
    return None


def demo_plan(text, block_names=("agent", "resolve")):
    """--from-prompt: what the demo's scripted agent would do, as edits.

    The work order in the prompt holds a shell block fenced ```agent (```resolve
    in resolve mode). It runs in a scratch copy of the builder's worktree with
    a private copy of the worktree's git dir (the index, HEAD, MERGE_HEAD: a
    `git mv` or a look at the unmerged paths works there and changes nothing
    of the real worktree), and the difference between the copy and the
    worktree is the plan: {"cwd", "writes": {rel: text}, "deletes": [rel]}.
    None when no builder's prompt is in `text`."""
    import shutil
    import subprocess
    import tempfile
    found = builder_of(text)
    if not found:
        return None
    _, env, cwd = found
    with open(env["SLUICE_PROMPT_FILE"], encoding="utf-8") as f:
        prompt = f.read()
    block = "resolve" if env.get("SLUICE_MODE") == "resolve" else "agent"
    lines, on, script = prompt.split("\n"), False, []
    for line in lines:
        if line == "```" + block:
            on = True
            continue
        if on and line == "```":
            break
        if on:
            script.append(line)
    plan = {"cwd": cwd, "writes": {}, "deletes": []}
    if not script:
        return plan
    tmp = tempfile.mkdtemp(prefix="fake-model-")
    try:
        scratch = os.path.join(tmp, "wt")
        shutil.copytree(cwd, scratch, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        gitdir = subprocess.run(["git", "-C", cwd, "rev-parse", "--absolute-git-dir"],
                                capture_output=True, text=True, check=True).stdout.strip()
        common = subprocess.run(["git", "-C", cwd, "rev-parse", "--git-common-dir"],
                                capture_output=True, text=True, check=True).stdout.strip()
        common = os.path.join(cwd, common) if not os.path.isabs(common) else common
        private = os.path.join(tmp, "gitdir")
        shutil.copytree(gitdir, private, symlinks=True)
        with open(os.path.join(private, "commondir"), "w") as f:
            f.write(os.path.abspath(common) + "\n")
        with open(os.path.join(private, "gitdir"), "w") as f:
            f.write(os.path.join(scratch, ".git") + "\n")
        with open(os.path.join(scratch, ".git"), "w") as f:
            f.write("gitdir: %s\n" % private)
        run_env = dict(os.environ)
        run_env.update({k: v for k, v in env.items() if k.startswith("SLUICE_")})
        subprocess.run(["sh", "-eu", "-c", "\n".join(script)], cwd=scratch, env=run_env,
                       check=False, capture_output=True)

        def files(root):
            out = {}
            for d, dirs, names in os.walk(root):
                dirs[:] = [x for x in dirs if x != ".git"]
                for n in names:
                    if n == ".git" and d == root:
                        continue
                    full = os.path.join(d, n)
                    with open(full, "rb") as f:
                        out[os.path.relpath(full, root)] = f.read()
            return out
        before, after = files(cwd), files(scratch)
        for rel, data in sorted(after.items()):
            if before.get(rel) != data:
                plan["writes"][rel] = data.decode("utf-8", errors="replace")
        plan["deletes"] = sorted(rel for rel in before if rel not in after)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return plan
