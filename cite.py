#!/usr/bin/env python3
"""Replace the citations of the design brief ("DESIGN.md section N[.x]",
"DESIGN.md 7b", "DESIGN.md sections 5, 6, 11") with the docs/ page and
section that now hold the design as built ("docs/design.md, The merge
train").

    python3 cite.py [--check] [PATH...]

PATHs (files or folders, relative to the checkout this script sits in, or
absolute) default to src, schema and scripts; tests, bench and docs cite the
brief too (python3 cite.py tests bench docs). Only the citation itself is
rewritten, in place, on the line(s) where it stands; a citation broken over
two comment lines keeps its line break. Running it again changes nothing
(no "DESIGN.md" is left to match), so it can be re-run on any checkout,
after any merge. --check changes nothing: it lists the citations left and
checks that every target below names a heading that exists; exit 1 on
either.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
WIDTH = 100

# The brief's section -> (docs file, heading title without its "N. " number).
SECTIONS = {
    "3": ("docs/design.md", "The .system folder"),
    "4": ("docs/work-orders.md", "Fields"),
    "5": ("docs/design.md", "Runs and their states"),
    "6": ("docs/ARCHITECTURE.md", "One run, from queued to merged"),
    "6.1": ("docs/design.md", "The run's worktree and the pool"),
    "6.2": ("docs/builders.md", "The builder contract"),
    "6.3": ("docs/design.md", "The run's worktree and the pool"),
    "6.4": ("docs/builders.md", "Gates"),
    "6.5": ("docs/builders.md", "Retry rules"),
    "7": ("docs/design.md", "The merge"),
    "7.4": ("docs/design.md", "The merge"),
    "7b": ("docs/design.md", "The merge train"),
    "7c": ("docs/design.md", "Not built"),
    "8": ("docs/reviewer.md", "The reviewer"),
    "9": ("docs/audit.md", "What a run folder holds"),
    "10": ("docs/config.md", "Configuration: .system/config.yaml"),
    "10b": ("docs/design.md", "Commands"),
    "11": ("docs/design.md", "Locks and crash recovery"),
    "12": ("docs/design.md", "Benchmarks"),
    "13": ("tests/README.md", None),
    "14": ("docs/scale-out.md", "What stays on the sluice host, what goes to a job"),
    "15": ("docs/design.md", "Not built"),
    "16": ("docs/design.md", "Not built"),
}

# Where one citation means something narrower than its section, or where a
# list of sections is better said by one: (file regex, line regex, sections
# as cited) -> targets. The first rule that matches wins.
RULES = [
    (r"^(src|schema)/", r"", "12", [("docs/design.md", "The run's worktree and the pool")]),
    (r"", r"recycl", "12", [("docs/design.md", "The run's worktree and the pool")]),
    (r"artifact/artifact\.h$", r"manifest\.json", "9",
     [("docs/audit.md", "The manifest and the chain")]),
    (r"artifact/artifact\.h$", r"sluice audit", "9",
     [("docs/audit.md", "What `sluice audit` checks")]),
    (r"006_manifest_chain\.sql$", r"", "9",
     [("docs/audit.md", "The manifest and the chain")]),
    (r"build(er)?/build(er)?\.h$", r"prompt", "6.2",
     [("docs/builders.md", "The prompt")]),
    (r"queue/queue\.h$", r"Markdown files", "4",
     [("docs/work-orders.md", "The file")]),
    (r"runner/step_job\.c$", r"", "14",
     [("docs/scale-out.md", "Crashes and lost jobs")]),
    (r"", r"", "5,10b", [("docs/design.md", "Commands")]),
    (r"", r"", "5,6,11", [("docs/ARCHITECTURE.md", "One run, from queued to merged")]),
    (r"", r"", "6.3,6.5", [("docs/design.md", "The run's worktree and the pool")]),
]

NUM = r"[0-9]+[a-z]?(?:\.[0-9]+)?"
# whitespace, possibly a line break and the next comment line's leader
SEP = r"(?:[ \t]*\n[ \t]*(?:(?:\*|--|#)[ \t]*)?|[ \t]+)"
CITE = re.compile(
    r"(?<![/\w])DESIGN\.md(?P<s1>%s)(?:sections?(?P<s2>%s))?"
    r"(?P<nums>%s(?:(?:,%s|%sand%s)%s)*)"
    r"(?P<dup>,%sdocs/[\w.-]+\.md\b)?" % (SEP, SEP, NUM, SEP, SEP, SEP, NUM, SEP))
SHORT = re.compile(r"(?<![/\w.])DESIGN (?P<nums>%s)\b" % NUM)  # "(DESIGN 7b)" in docs


def targets_of(path, line, nums):
    key = ",".join(nums)
    for file_re, line_re, sections, targets in RULES:
        if sections == key and re.search(file_re, path) and re.search(line_re, line):
            return targets
    out = []
    for n in nums:
        t = SECTIONS.get(n) or SECTIONS.get(n.split(".")[0])
        if t is None:
            raise SystemExit("cite.py: %s: no target for DESIGN.md section %s" % (path, n))
        if t not in out:
            out.append(t)
    return out


def words_of(targets):
    """The citation as text: files with their titles, a file named once."""
    parts, last = [], None
    for f, title in targets:
        if f == last:
            parts.append(title)
        else:
            parts.append(f if title is None else "%s, %s" % (f, title))
        last = f
    return "; ".join(parts)


def fill(first_line_len, text, sep):
    """Break `text` at `sep` (a line break and a comment leader) after as
    many words as fit on the first line, and before the last word at least,
    so that the file keeps its number of lines."""
    words = text.split(" ")
    n = len(words) - 1
    while n > 1 and first_line_len + len(" ".join(words[:n])) > WIDTH:
        n -= 1
    return " ".join(words[:n]) + sep + " ".join(words[n:])


def rewrite(path, text):
    def one(m):
        start = text.rfind("\n", 0, m.start()) + 1
        line = text[start:text.find("\n", m.start()) if "\n" in text[m.start():] else len(text)]
        nums = re.findall(NUM, m.group("nums"))
        targets = targets_of(path, line, nums)
        words = words_of(targets)
        dup = m.group("dup")
        tail = "" if dup and dup.split()[-1].lstrip(",") == targets[0][0] else (dup or "")
        nl = re.search(r"\n[ \t]*(?:(?:\*|--|#)[ \t]*)?", m.group(0))
        if nl:  # the citation was broken over two lines: so is its replacement
            words = fill(len(text[start:m.start()].expandtabs(8)), words, nl.group(0))
        return words + tail

    text = CITE.sub(one, text)
    return SHORT.sub(lambda m: words_of(targets_of(path, "", [m.group("nums")])), text)


def trim_banners(text):
    """A banner comment ("/* ---- x ---- */") made longer than WIDTH by a
    citation gives up dashes, never words."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"^(.*?)( -+)( \*/)$", line)
        if m and len(line.expandtabs(8)) > WIDTH and "docs/" in line:
            dashes = max(4, len(m.group(2)) - (len(line.expandtabs(8)) - WIDTH))
            line = m.group(1) + " " + "-" * (dashes - 1) + m.group(3)
        out.append(line)
    return "\n".join(out)


def files(paths):
    for p in paths:
        p = p if os.path.isabs(p) else os.path.join(ROOT, p)
        if os.path.isfile(p):
            yield p
            continue
        for d, dirs, names in os.walk(p):
            # build folders of the checkout (build/, build-asan/) are not sources
            dirs[:] = sorted(x for x in dirs if not x.startswith(".") and
                             not (d == ROOT and x.startswith("build")))
            for name in sorted(names):
                if name.endswith((".c", ".h", ".sql", ".py", ".sh", ".md", ".cmake", ".txt")):
                    yield os.path.join(d, name)


def heading_exists(f, title):
    path = os.path.join(ROOT, f)
    if not os.path.isfile(path):
        return False
    if title is None:
        return True
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^#+\s+(?:[0-9]+[a-z]?\.\s+)?(.*?)\s*$", line)
        if m and m.group(1) == title:
            return True
    return False


def main(argv):
    check = "--check" in argv
    paths = [a for a in argv[1:] if a != "--check"] or ["src", "schema", "scripts"]
    bad = 0
    every = list(SECTIONS.values()) + [t for r in RULES for t in r[3]]
    for f, title in every:
        if not heading_exists(f, title):
            print("cite.py: %s has no heading '%s'" % (f, title))
            bad += 1
    me = os.path.abspath(__file__)
    for path in files(paths):
        if os.path.abspath(path) == me:
            continue
        rel = os.path.relpath(path, ROOT)
        text = open(path, encoding="utf-8").read()
        if "DESIGN" not in text:
            continue
        new = trim_banners(rewrite(rel, text))
        if check:
            for m in list(CITE.finditer(text)) + list(SHORT.finditer(text)):
                print("%s:%d: cites the design brief: %s"
                      % (rel, text.count("\n", 0, m.start()) + 1, " ".join(m.group(0).split())))
                bad += 1
        elif new != text:
            with open(path, "w", encoding="utf-8") as out:
                out.write(new)
            print("cite.py: %s" % rel)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
