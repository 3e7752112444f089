#!/usr/bin/env python3
"""Check schema/work-order.schema.json and schema/config.schema.json against
the fixtures (tests/cli/t0810-schema-fixtures.sh runs this).

    check_fixtures.py SCHEMA_DIR FIXTURES_DIR NOT_IN_SCHEMA C_FIELDS [CONFIG...]

For every work-order fixture (fixtures/work_orders/{valid,seed,edge}/ must
pass, fixtures/work_orders/invalid/ must fail) and every config fixture
(fixtures/config/*.yaml: invalid when a .expected file is beside it), the
YAML is read into JSON the way sluice reads it (src/queue/parse.c) and
validated. A fixture listed in NOT_IN_SCHEMA is one whose rule no JSON
Schema can state: kind 'file' must not even give a JSON document (the C code
refuses the bytes or the YAML before any field rule), kind 'schema-passes'
must be accepted by the schema (sluice check refuses it, which the shell
test checks). Every other invalid fixture must be refused by the schema.

C_FIELDS holds lines "<fixture path>\t<fields JSON>": the front matter as
sluice itself stored it (work_orders.fields_json). Where sluice gave one, the
JSON read here must equal it, so this reader cannot drift from the C one.

Each CONFIG given after them (the config `sluice init` wrote) must pass too.

Prints "ok <fixture>" or "FAIL <fixture>: <why>" per fixture, "FAIL ..."
for problems of the list itself; exits 1 if any line is FAIL.
"""
import json
import os
import subprocess
import sys

import jsonschema
import yaml

try:
    from yaml._yaml import CParser as Parser  # libyaml, the parser sluice uses
except ImportError:  # pragma: no cover
    from yaml import Parser

WO_MAX_BYTES = 1 << 20
MAX_DEPTH = 64


class NotJSON(Exception):
    """The C code refuses the file before any field rule applies."""


# ---- scalars as src/queue/parse.c reads them --------------------------------

def is_int_text(s):
    p = s[1:] if s[:1] in "+-" else s
    if not p or (p[0] == "0" and len(p) > 1) or len(p) > 18:
        return False
    return p.isascii() and p.isdigit()


def is_float_text(s):
    if not any(c.isdigit() for c in s) or "." not in s:
        return False
    if any(c not in "+-.0123456789eE" for c in s):
        return False
    try:
        v = float(s)
    except ValueError:
        return False
    if v in (float("inf"), float("-inf")):
        return False  # strtod sets ERANGE
    if v == 0.0 and any(c in "123456789" for c in s.split("e")[0].split("E")[0]):
        return False  # underflow: ERANGE
    return True


def scalar_json(ev):
    s = ev.value
    plain = ev.style in (None, "")
    if not plain or ev.tag == "tag:yaml.org,2002:str":
        return s
    if s in ("", "~", "null", "Null", "NULL"):
        return None
    if s in ("true", "True", "TRUE"):
        return True
    if s in ("false", "False", "FALSE"):
        return False
    if is_int_text(s):
        return int(s)
    if is_float_text(s):
        return float(s)
    return s


def key_text(v):
    """queue__text(): text as is, numbers printed, anything else refused."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return "%d" % v
    if isinstance(v, float):
        return "%g" % v
    return None


# ---- YAML events into JSON ----------------------------------------------------

def yaml_json(data, config):
    """The JSON of YAML bytes. Work orders (config False): aliases, duplicate
    keys and a second document are refused, keys are read as queue__text().
    Config (config True): aliases are expanded, only the first document is
    read, keys are their text as written."""
    parser = Parser(data)
    stack = []  # [node, pending key]
    anchors = {}
    root = None
    docs = 0
    have_root = False

    def attach(v, anchor=None):
        nonlocal root, have_root
        if anchor:
            anchors[anchor] = v
        if not stack:
            root, have_root = v, True
            return
        top = stack[-1]
        if isinstance(top[0], list):
            top[0].append(v)
            return
        if top[1] is None:
            if config:
                k = v if isinstance(v, str) else None
                if k is None:
                    raise NotJSON("a key that is not a plain scalar")
            else:
                k = key_text(v)
                if k is None:
                    raise NotJSON("a key that is not text")
            if k in top[0]:
                raise NotJSON("key '%s' appears twice" % k)
            top[1] = k
            return
        top[0][top[1]] = v
        top[1] = None

    try:
        while parser.check_event():
            ev = parser.get_event()
            name = type(ev).__name__
            if name == "DocumentStartEvent":
                docs += 1
                if docs > 1:
                    if config:
                        break
                    raise NotJSON("more than one YAML document")
            elif name == "DocumentEndEvent" and config:
                break
            elif name == "AliasEvent":
                if not config:
                    raise NotJSON("a YAML alias")
                if ev.anchor not in anchors:
                    raise NotJSON("an alias to an unknown anchor")
                attach(json.loads(json.dumps(anchors[ev.anchor])))
            elif name == "ScalarEvent":
                v = scalar_json(ev) if not (config and stack and isinstance(stack[-1][0], dict)
                                            and stack[-1][1] is None) else ev.value
                attach(v, ev.anchor)
            elif name in ("SequenceStartEvent", "MappingStartEvent"):
                if stack and isinstance(stack[-1][0], dict) and stack[-1][1] is None:
                    raise NotJSON("a key that is a list or mapping")
                if len(stack) == MAX_DEPTH:
                    raise NotJSON("nested more than %d levels" % MAX_DEPTH)
                stack.append([[] if name == "SequenceStartEvent" else {}, None, ev.anchor])
            elif name in ("SequenceEndEvent", "MappingEndEvent"):
                node, _, anchor = stack.pop()
                attach(node, anchor)
    except yaml.YAMLError as e:
        raise NotJSON("YAML syntax error: %s" % str(e).splitlines()[0])
    return root if have_root else None


# ---- the front matter, as src/queue/parse.c finds it --------------------------

def is_fence(line):
    return line.startswith(b"---") and all(c in b" \t\r" for c in line[3:])


def front_matter(data):
    if len(data) > WO_MAX_BYTES:
        raise NotJSON("over 1 MiB")
    if b"\0" in data:
        raise NotJSON("a NUL byte")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotJSON("not UTF-8")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip(b" \t\r\n"):
        raise NotJSON("an empty file")
    lines = data.split(b"\n")
    if not is_fence(lines[0]):
        raise NotJSON("no front matter")
    for i in range(1, len(lines)):
        if is_fence(lines[i]):
            fm = b"\n".join(lines[1:i]) + (b"\n" if i > 1 else b"")
            break
    else:
        raise NotJSON("front matter not closed")
    return yaml_json(fm, config=False)  # empty, a list, a scalar: the schema refuses it


def fixture_bytes(path):
    if path.endswith(".gen"):
        return subprocess.run(["sh", path], check=True, stdout=subprocess.PIPE).stdout
    with open(path, "rb") as f:
        return f.read()


# ---- the fixtures -------------------------------------------------------------

def fixtures(fx):
    """(fixture path relative to fx, kind 'wo'|'config', valid?)"""
    out = []
    for sub in ("valid", "seed", "edge"):
        for d, _, files in os.walk(os.path.join(fx, "work_orders", sub)):
            out += [(os.path.relpath(os.path.join(d, f), fx), "wo", True)
                    for f in files if f.endswith(".md")]
    inv = os.path.join(fx, "work_orders", "invalid")
    for f in os.listdir(inv):
        ext = os.path.splitext(f)[1]
        if ext in (".md", ".gen"):  # cycle-2.part2.md is a second file of cycle-2
            out.append((os.path.join("work_orders", "invalid", f), "wo", False))
    cfg = os.path.join(fx, "config")
    for f in os.listdir(cfg):
        if f.endswith(".yaml"):
            exp = os.path.join(cfg, f[:-5] + ".expected")
            out.append((os.path.join("config", f), "config", not os.path.exists(exp)))
    return sorted(out)


def case_of(rel):
    """work_orders/invalid/cycle-2.part2.md -> work_orders/invalid/cycle-2.md"""
    d, f = os.path.split(rel)
    base = f.split(".")[0]
    ext = ".yaml" if rel.startswith("config/") else ".md"
    if rel.endswith(".gen"):
        ext = ".gen"
    return os.path.join(d, base + ext)


def load_list(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[1] not in ("file", "schema-passes"):
                raise SystemExit("%s:%d: want '<fixture> file|schema-passes <why>'" % (path, n))
            out[parts[0]] = parts[1]
    return out


def validator(schema_dir, name):
    with open(os.path.join(schema_dir, name), encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def main():
    schema_dir, fx, list_path, c_fields_path = sys.argv[1:5]
    wo_schema = validator(schema_dir, "work-order.schema.json")
    cfg_schema = validator(schema_dir, "config.schema.json")
    listed = load_list(list_path)
    c_fields = {}
    with open(c_fields_path, encoding="utf-8") as f:
        for line in f:
            if "\t" in line:
                p, j = line.rstrip("\n").split("\t", 1)
                c_fields[p] = json.loads(j)
    failed = 0
    seen = set()

    def report(rel, why):
        nonlocal failed
        if why:
            failed += 1
            print("FAIL %s: %s" % (rel, why))
        else:
            print("ok %s" % rel)

    for rel, kind, valid in fixtures(fx):
        case = case_of(rel)
        how = listed.get(case)
        seen.add(case)
        path = os.path.join(fx, rel)
        try:
            data = fixture_bytes(path)
            doc = front_matter(data) if kind == "wo" else yaml_json(data, config=True)
        except NotJSON as e:
            if how == "file":
                report(rel, None)
            else:
                report(rel, "not read as JSON (%s), and not listed as 'file'" % e)
            continue
        if how == "file":
            report(rel, "listed as 'file' but it reads as JSON now: take it off the list")
            continue
        if rel in c_fields and c_fields[rel] != doc:
            report(rel, "read as %s here but sluice stored %s" %
                   (json.dumps(doc)[:300], json.dumps(c_fields[rel])[:300]))
            continue
        errors = sorted((kind == "wo" and wo_schema or cfg_schema).iter_errors(doc),
                        key=lambda e: list(e.path))
        if valid or how == "schema-passes":
            why = None
            if errors:
                e = errors[0]
                why = "the schema refuses it: %s at /%s" % (
                    e.message[:300], "/".join(str(p) for p in e.path))
                if how == "schema-passes":
                    why += " (listed as 'schema-passes': take it off the list)"
            report(rel, why)
        else:
            report(rel, None if errors else
                   "the schema accepts it (sluice refuses it); fix the schema or list it "
                   "in tests/schema/not-in-schema.txt with the reason")
    known = set(rel for rel, _, _ in fixtures(fx))
    for rel in sorted(set(c_fields) - known):
        report(rel, "sluice stored fields for it but it is no fixture (a path changed?)")
    for path in sys.argv[5:]:
        try:
            with open(path, "rb") as f:
                errors = list(cfg_schema.iter_errors(yaml_json(f.read(), config=True)))
            report(path, errors and "the schema refuses it: %s" % errors[0].message[:300])
        except NotJSON as e:
            report(path, "not read as JSON (%s)" % e)
    for case in sorted(set(listed) - seen):
        report(case, "listed in %s but there is no such fixture" % os.path.basename(list_path))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
