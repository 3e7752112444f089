#!/usr/bin/env python3
"""sluice merge-preview --json against git merge-tree, merge by merge.

    compare.py SLUICE REPO

For every merge commit of REPO (its first two parents) and every pair of
branch tips, in both orders: `sluice merge-preview --json --libgit2 OURS
THEIRS` and `git merge-tree --write-tree --name-only -z OURS THEIRS` (on the
commit ids) must agree on the verdict (exit status and "clean"), the tree
and the list of conflicted paths (git's "<path>~<id>" counted as <path>).
Paths are compared as sluice's JSON has them: a byte that is not UTF-8 as
U+FFFD. Prints one summary line (and each disagreement); exits 1 on any.
"""
import itertools
import json
import subprocess
import sys


def git(repo, *args, ok=(0,)):
    p = subprocess.run(["git", "-C", repo] + list(args), capture_output=True)
    if p.returncode not in ok:
        sys.exit("git %s: %s" % (" ".join(args), p.stderr.decode(errors="replace")))
    return p


def git_merge(repo, ours, theirs):
    p = git(repo, "merge-tree", "--write-tree", "--name-only", "-z", ours, theirs, ok=(0, 1))
    toks = p.stdout.split(b"\0")
    paths = set()
    for t in toks[1:] if p.returncode == 1 else []:
        if not t:
            break
        for side in (ours, theirs):
            if t.endswith(b"~" + side.encode()):
                t = t[: -len(side) - 1]
        paths.add(t.decode("utf-8", errors="replace"))
    return p.returncode, toks[0].decode(), sorted(paths)


def sluice_merge(sluice, repo, ours, theirs):
    p = subprocess.run([sluice, "-C", repo, "merge-preview", "--json", "--libgit2", ours, theirs],
                       capture_output=True)
    if p.returncode not in (0, 1) or not p.stdout:
        sys.exit("sluice merge-preview %s %s: exit %d: %s"
                 % (ours, theirs, p.returncode, p.stderr.decode(errors="replace")))
    return p.returncode, json.loads(p.stdout)


def main():
    sluice, repo = sys.argv[1], sys.argv[2]
    cases = []
    for line in git(repo, "rev-list", "--merges", "--all", "--parents").stdout.decode().split("\n"):
        ids = line.split()
        if len(ids) >= 3:
            cases.append((ids[1], ids[2], "merge " + ids[0][:12]))
    tips = git(repo, "for-each-ref", "--format=%(objectname) %(refname:short)",
               "refs/heads/").stdout.decode().split("\n")
    tips = [t.split(" ", 1) for t in tips if t]
    for (a, na), (b, nb) in itertools.permutations(tips, 2):
        if a != b:
            cases.append((a, b, "tips %s %s" % (na, nb)))
    bad = clean = conflicted = lg_differs = 0
    seen_paths = set()
    for ours, theirs, what in cases:
        g_rc, g_tree, g_paths = git_merge(repo, ours, theirs)
        s_rc, s = sluice_merge(sluice, repo, ours, theirs)
        got = (s_rc, s["clean"], s["tree"], sorted(s["conflicts"]))
        want = (g_rc, g_rc == 0, g_tree, g_paths)
        if got != want:
            bad += 1
            print("%s: sluice %r, git %r" % (what, got, want))
        if g_rc == 0:
            clean += 1
        else:
            conflicted += 1
        seen_paths.update(g_paths)
        lg = s["libgit2"]
        if lg["clean"] != (g_rc == 0) or (lg["clean"] and lg["tree"] != g_tree) or \
                (not lg["clean"] and sorted(lg["conflicts"]) != g_paths):
            lg_differs += 1
    print("# %d merges compared (%d clean, %d conflicted), %d conflicted paths seen; "
          "libgit2's opinion differed from git's in %d; %d disagreements"
          % (len(cases), clean, conflicted, len(seen_paths), lg_differs, bad))
    for name in sys.argv[3:]:  # paths that must have been among the conflicted ones
        if name.encode().decode("unicode_escape") not in seen_paths:
            print("expected conflicted path never seen: %r" % name)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
