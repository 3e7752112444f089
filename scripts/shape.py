#!/usr/bin/env python3
"""The shape of src/ (issue 11's "Done when"), checked by tests/cli/t0015-shape.sh.

    python3 scripts/shape.py [SOURCE_DIR]

SOURCE_DIR is the checkout (default: the one this script is in). Prints the
module table, then one line per violation, `file:line: what`, and exits 1 when
there is any (0 when none, 2 on a usage error). The rules:

  share     no module (src/<m>/*.[ch]) holds more than a quarter of src/'s lines
  function  no function in src/**/*.c has more than 60 lines between the `{`
            and the `}` at column 0 (the tree's style: braces of a function
            definition alone on their line)
  include   a file of module A includes only headers of A and of the modules A
            links in CMakeLists.txt (its sluice_module() line; the sluice
            executable, src/cli/, links sl_runner and with it every module),
            never another module's <m>_int.h; the headers of src/ include each
            other without a cycle; a module other than core and cli has at most
            its public header <m>.h and its <m>_int.h
  dispatch  in src/runner/, no step file (step_*.c) calls a function that
            advance.c (the dispatcher) defines: the dispatcher calls the steps,
            never the other way round
  steps     no step file calls a function that another step file defines: what
            several steps share lives in kernel.c (moving a run, its artifacts)
            or a runner file named for what it holds, or in the module that
            owns the concern
  state     no string literal names a run state (the states of the runs table's
            CHECK constraint in schema/db/001_*.sql) outside src/store/state.c:
            "queued", a set such as ",queued,reviewing," or SQL's 'queued'; a
            literal that spells a state but means something else (a JSON key,
            a word of a message) says so in a comment on its line or at the
            start of its statement: /* not a run state */
  warning   CMakeLists.txt does not turn -Wformat-truncation off
  path      no snprintf into a fixed path buffer (a local char array sized
            PATH_MAX, or of 4096 bytes or more with a '/' in the format) as a
            statement of its own, unless a later `strlen(buf) >=` checks it:
            what it returns says whether the path fit
  design    no file under src/ or schema/ cites DESIGN.md, the design brief
            that is not in the repository: comments cite docs/ ("docs/design.md,
            The merge train"); cite.py at the top of the checkout rewrites them
  banned    no call in src/ of a function core/banned.h bans (strcpy, sprintf,
            atoi, localtime...; the compiler refuses them too, this names them)
  trailer   the landing trailer's name, "Sluice-Run", is a literal only in
            src/merge/merge.h (MERGE_TRAILER_RUN): one writer, one reader
"""
import functools
import os
import re
import sys

MAX_SHARE = 0.25
MAX_FUNCTION_LINES = 60
DISPATCHER = "src/runner/advance.c"
STEP_FILE = re.compile(r"^src/runner/step_[a-z_]+\.c$")
STATE_TABLE = "src/store/state.c"
# A comment with this, on the line of a literal that happens to spell a state
# but is no state (a JSON key, a word of a message) or at the start of its
# statement: /* not a run state */
EXEMPT = "not a run state"
# The modules that are not a library with one public header.
MANY_HEADERS = ("core", "cli")

violations = []


def violation(where, line, what):
    violations.append("%s:%d: %s" % (where, line, what) if line else "%s: %s" % (where, what))


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def sources(root):
    """src/<module>/<file>.[ch], as relative paths, sorted."""
    out = []
    src = os.path.join(root, "src")
    for module in sorted(os.listdir(src)):
        if not os.path.isdir(os.path.join(src, module)):
            continue
        for name in sorted(os.listdir(os.path.join(src, module))):
            if name.endswith((".c", ".h")):
                out.append("src/%s/%s" % (module, name))
    return out


def module_of(rel):
    return rel.split("/")[1]


# the characters that may start a comment or a literal
COMMENT_OR_QUOTE = re.compile(r"[/\"']")


# Each check blanks the same files again: the blanked text is kept (a file's
# text is its key), and a run of plain code is copied in one piece, not a
# character at a time (t0015 and t1210 run the check some thirty times).
@functools.lru_cache(maxsize=None)
def blank_comments_and_strings(text, keep_strings=False):
    """The text with comments, character literals and (unless keep_strings)
    string literals blanked, newlines kept, so that line numbers stay right."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            lit = text[i:j]
            keep = keep_strings and c == '"'
            out.append(lit if keep else c + re.sub(r"[^\n]", " ", lit[1:-1]) + c)
            i = j
        else:
            m = COMMENT_OR_QUOTE.search(text, i + 1)
            j = n if m is None else m.start()
            out.append(text[i:j])
            i = j
    return "".join(out)


def string_literals(text):
    """(line, content) of every "..." literal outside comments and #include."""
    code = blank_comments_and_strings(text, keep_strings=True)
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"', code):
        start = code.rfind("\n", 0, m.start()) + 1
        if code[start:m.start()].lstrip().startswith("#"):
            continue  # #include "x.h", #define X "..." is still a literal below
        yield code.count("\n", 0, m.start()) + 1, m.group(1)
    for m in re.finditer(r'^\s*#\s*define\b[^\n]*?"((?:[^"\\\n]|\\.)*)"', code, re.M):
        yield code.count("\n", 0, m.start()) + 1, m.group(1)


# --- share -------------------------------------------------------------------

def check_share(root, files):
    lines = {}
    counts = {}
    for rel in files:
        m = module_of(rel)
        lines[m] = lines.get(m, 0) + read(root, rel).count("\n")
        counts[m] = counts.get(m, 0) + 1
    total = sum(lines.values()) or 1
    print("%-10s %5s %7s %6s" % ("module", "files", "lines", "share"))
    for m in sorted(lines, key=lambda k: -lines[k]):
        print("%-10s %5d %7d %5.1f%%" % (m, counts[m], lines[m], 100.0 * lines[m] / total))
    print("%-10s %5d %7d" % ("src/", sum(counts.values()), total))
    for m, n in sorted(lines.items()):
        if n > MAX_SHARE * total:
            violation("src/%s/" % m, 0, "%d of src/'s %d lines (%.1f%%), more than %d%%"
                      % (n, total, 100.0 * n / total, int(MAX_SHARE * 100)))


# --- function ----------------------------------------------------------------

def functions(text):
    """(name, first line of the signature, line of '{', body lines, static?)
    of each function definition: a '{' alone at column 0, its signature the
    lines above it up to a blank line, a ';', a '}', a comment's end or a
    preprocessor line; its end the next '}' at column 0."""
    lines = blank_comments_and_strings(text).split("\n")
    raw = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        j = i - 1
        while j >= 0:
            prev = raw[j].rstrip()
            if (not lines[j].strip() or prev.endswith((";", "}", "*/")) or prev.startswith("#")):
                break
            j -= 1
        signature = " ".join(lines[j + 1:i])
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        m = re.search(r"([A-Za-z_]\w*)\s*\(", signature)
        if m:
            static = re.match(r"\s*(static|inline)\b", signature) is not None
            yield m.group(1), j + 2, i + 1, end - i - 1, static
        i = end + 1


def check_functions(root, files):
    for rel in files:
        if not rel.endswith(".c"):
            continue
        for name, first, brace, body, _ in functions(read(root, rel)):
            if body > MAX_FUNCTION_LINES:
                violation(rel, first, "function %s() has %d lines, more than %d"
                          % (name, body, MAX_FUNCTION_LINES))


# --- include -----------------------------------------------------------------

def module_graph(root):
    """module -> the modules it may include, from CMakeLists.txt."""
    cmake = read(root, "CMakeLists.txt")
    graph = {}
    for m in re.finditer(r"^\s*sluice_module\(\s*(\w+)([^)]*)\)", cmake, re.M):
        graph[m.group(1)] = set(re.findall(r"\bsl_(\w+)", m.group(2)))
    exe = re.search(r"^\s*target_link_libraries\(\s*sluice\b([^)]*)\)", cmake, re.M)
    if exe:
        # The executable links PRIVATE; the modules link PUBLIC: all they bring.
        seen, todo = set(), list(re.findall(r"\bsl_(\w+)", exe.group(1)))
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(graph.get(m, ()))
        graph["cli"] = seen
    return graph


def includes(text):
    """(line, path) of each #include "path"."""
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            yield n, m.group(1)


def find_cycle(graph):
    """One cycle of a directed graph (a list of nodes, first == last), or None."""
    state = {}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state and nxt in graph:
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph[nxt]))))
    return None


def check_includes(root, files):
    allowed = module_graph(root)
    cycle = find_cycle(allowed)
    if cycle:
        violation("CMakeLists.txt", 0, "the modules link in a cycle: " + " -> ".join(cycle))
    headers = {}
    for rel in files:
        m = module_of(rel)
        text = read(root, rel)
        if rel.endswith(".h"):
            headers[rel] = set()
            name = os.path.basename(rel)
            if m not in MANY_HEADERS and name not in (m + ".h", m + "_int.h"):
                violation(rel, 0, "module %s has one public header, %s/%s.h, and %s/%s_int.h"
                          % (m, m, m, m, m))
        for line, path in includes(text):
            if "/" not in path:
                violation(rel, line, 'include "%s": name it by its module, "<module>/%s"'
                          % (path, path))
                continue
            other = path.split("/")[0]
            if rel.endswith(".h"):
                headers[rel].add("src/" + path)
            if other == m:
                continue
            if path.endswith("_int.h"):
                violation(rel, line, "%s includes %s, module %s's inside header"
                          % (m, path, other))
            elif other not in allowed.get(m, ()):
                violation(rel, line, "module %s includes %s, but does not link sl_%s "
                          "(CMakeLists.txt: sluice_module(%s ...))" % (m, path, other, m))
    cycle = find_cycle(headers)
    if cycle:
        violation(cycle[0], 0, "headers include each other: " + " -> ".join(cycle))


# --- dispatch ----------------------------------------------------------------

def check_dispatch(root, files):
    if DISPATCHER not in files:
        violation(DISPATCHER, 0, "the dispatcher is not there; update scripts/shape.py")
        return
    defined = {name for name, _, _, _, static in functions(read(root, DISPATCHER)) if not static}
    for rel in files:
        if not STEP_FILE.match(rel):
            continue
        code = blank_comments_and_strings(read(root, rel))
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", code):
            if m.group(1) in defined:
                violation(rel, code.count("\n", 0, m.start()) + 1,
                          "a step calls %s() of the dispatcher %s" % (m.group(1), DISPATCHER))


# --- steps -------------------------------------------------------------------

def check_steps(root, files):
    steps = [rel for rel in files if STEP_FILE.match(rel)]
    owner = {}
    for rel in steps:
        for name, _, _, _, static in functions(read(root, rel)):
            if not static:
                owner[name] = rel
    for rel in steps:
        code = blank_comments_and_strings(read(root, rel))
        for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", code):
            other = owner.get(m.group(1))
            if other and other != rel:
                violation(rel, code.count("\n", 0, m.start()) + 1,
                          "a step calls %s() of the step file %s" % (m.group(1), other))


# --- state -------------------------------------------------------------------

def run_states(root):
    db = os.path.join(root, "schema", "db")
    first = sorted(f for f in os.listdir(db) if f.startswith("001_") and f.endswith(".sql"))
    if not first:
        return []
    sql = read(root, "schema/db/" + first[0])
    table = re.search(r"CREATE TABLE runs\b.*?\bstate\b[^,]*?CHECK\s*\(\s*state\s+IN\s*\(([^)]*)\)",
                      sql, re.S)
    return re.findall(r"'([a-z_]+)'", table.group(1)) if table else []


def names_a_state(literal, states):
    if literal in states:
        return literal
    words = [w.strip() for w in literal.split(",") if w.strip()]
    if "," in literal and words and all(w in states for w in words):
        return literal  # a set: ",queued,reviewing,"
    for w in re.findall(r"'([a-z_]+)'", literal):
        if w in states:
            return "'%s'" % w  # SQL
    return None


def exempt_lines(text):
    """The lines a /* not a run state */ comment covers: from its own line to
    the end of the statement there (the next line with a ';')."""
    raw = text.split("\n")
    code = blank_comments_and_strings(text).split("\n")
    out = set()
    for i, line in enumerate(raw):
        if EXEMPT not in line:
            continue
        j = i
        while j < len(code) - 1 and ";" not in code[j]:
            j += 1
        out.update(range(i + 1, j + 2))
    return out


def check_states(root, files):
    states = set(run_states(root))
    if not states:
        violation("schema/db/001_*.sql", 0, "no CHECK (state IN (...)) in CREATE TABLE runs")
        return
    for rel in files:
        if rel == STATE_TABLE:
            continue
        text = read(root, rel)
        exempt = exempt_lines(text)
        for line, literal in string_literals(text):
            if line in exempt:
                continue
            found = names_a_state(literal, states)
            if found:
                violation(rel, line, 'run state %s in a string literal: use the state table (%s)'
                          % (found if found.startswith("'") else '"%s"' % found, STATE_TABLE))


# --- path --------------------------------------------------------------------

def call_discarded(code, start):
    """1 when the call whose '(' is at code[start] is a statement of its own
    (its value unused): the matching ')' is followed by ';'."""
    depth = 0
    for j in range(start, len(code)):
        if code[j] == "(":
            depth += 1
        elif code[j] == ")":
            depth -= 1
            if depth == 0:
                return code[j + 1:].lstrip().startswith(";")
    return False


def path_buffers(root, files):
    """(file, line, buffer) of each snprintf into a fixed path buffer whose
    result is not looked at: a local char array sized PATH_MAX, or of 4096
    bytes or more with a '/' in the format; the format converts something."""
    found = []
    for rel in files:
        if not rel.endswith(".c"):
            continue
        text = read(root, rel)
        raw = text.split("\n")
        code = blank_comments_and_strings(text)
        lines = code.split("\n")
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for _, _, brace, body, _ in functions(text):
            sizes = {}
            for line in lines[brace:brace + body]:
                m = re.match(r"\s*(?:static\s+)?char\s+([^;=(]*)[;=]", line)
                for d in m.group(1).split(",") if m else ():
                    b = re.match(r"\s*([A-Za-z_]\w*)\s*\[([^]]*)\]", d)
                    if b:
                        sizes[b.group(1)] = b.group(2)
            for i in range(brace, brace + body):
                m = re.match(r"(\s*(?:\(void\)\s*)?snprintf)\(\s*([A-Za-z_]\w*)\s*,", lines[i])
                if not m or m.group(2) not in sizes:
                    continue
                size = sizes[m.group(2)]
                big = re.match(r"\s*\d+\s*$", size) and int(size) >= 4096
                fmt = re.search(r'"((?:[^"\\]|\\.)*)"', raw[i])
                if not fmt or "%" not in fmt.group(1):
                    continue  # a constant: it fits or the compiler says so
                if "PATH_MAX" not in size and not (big and "/" in fmt.group(1)):
                    continue
                later = "\n".join(lines[i + 1:brace + body])
                if re.search(r"\bstrlen\(\s*%s\s*\)\s*>=" % m.group(2), later):
                    continue  # checked afterwards (a buffer larger than any path kept)
                if call_discarded(code, offsets[i] + len(m.group(1))):
                    found.append((rel, i + 1, m.group(2)))
    return found


def check_paths(root, files):
    for rel, line, buf in path_buffers(root, files):
        violation(rel, line, "snprintf into the path buffer %s with no check of its length: "
                  "check what it returns, or use an allocating path helper" % buf)


# --- warning -----------------------------------------------------------------

def check_warning(root):
    for n, line in enumerate(read(root, "CMakeLists.txt").split("\n"), 1):
        if "-Wno-format-truncation" in line.split("#")[0]:
            violation("CMakeLists.txt", n, "-Wno-format-truncation: the warning stays on")


# --- design ------------------------------------------------------------------

DESIGN_CITE = re.compile(r"(?<![/\w])DESIGN\.md")


def check_design(root):
    for top in ("src", "schema"):
        for d, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(d, name), root)
                for n, line in enumerate(read(root, rel).split("\n"), 1):
                    if DESIGN_CITE.search(line):
                        violation(rel, n, "cites DESIGN.md, which is not in the repository: "
                                  "cite the docs/ page and section (python3 cite.py)")


TRAILER_HOME = "src/merge/merge.h"


def check_trailer(root, files):
    """The landing trailer's name is spelled once: "Sluice-Run" as a literal
    of its own only in merge/merge.h (MERGE_TRAILER_RUN), which the one
    writer (merge/commit.c) and the one reader (merge/landings.c) use."""
    for rel in files:
        if rel == TRAILER_HOME:
            continue
        for line, lit in string_literals(read(root, rel)):
            if lit == "Sluice-Run":
                violation(rel, line, 'spells the trailer "Sluice-Run": use MERGE_TRAILER_RUN '
                          "(merge/merge.h)")


BANNED_HEADER = "src/core/banned.h"
BANNED = ("strcpy", "strcat", "strncpy", "strncat", "strtok", "strtok_r", "sprintf", "vsprintf",
          "gmtime", "localtime", "ctime", "ctime_r", "asctime", "asctime_r", "mktemp",
          "atoi", "atol", "atoll", "atof")
BANNED_CALL = re.compile(r"\b(%s)\s*\(" % "|".join(BANNED))


def check_banned(root, files):
    """The functions core/banned.h makes compile errors (as git's banned.h),
    named here with file and line: no call of them in src/."""
    for rel in files:
        if rel == BANNED_HEADER:
            continue
        code = blank_comments_and_strings(read(root, rel))
        for m in BANNED_CALL.finditer(code):
            violation(rel, code.count("\n", 0, m.start()) + 1,
                      "calls %s(), which core/banned.h bans: see there what to use" % m.group(1))


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: shape.py [SOURCE_DIR]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = sources(root)
    check_share(root, files)
    check_functions(root, files)
    check_includes(root, files)
    check_dispatch(root, files)
    check_steps(root, files)
    check_states(root, files)
    check_warning(root)
    check_paths(root, files)
    check_design(root)
    check_trailer(root, files)
    check_banned(root, files)
    for v in violations:
        print(v)
    print("shape: %d violation%s" % (len(violations), "" if len(violations) == 1 else "s"))
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
