#!/usr/bin/env python3
"""sluice check and the schemas on random work orders and configs: they
must agree (tests/cli/t0810-schema-fixtures.sh runs this).

    differential.py SLUICE REPO SCHEMA_DIR [CASES [SEED]]

REPO is a repository set up with `sluice init` whose branch main exists.
Each case is one config (.system/config.yaml) or one work order
(work_orders/W1.md) built from a few keys and values drawn from pools, and
one string for a rule written as a pattern (target, merge.message, a retry
prompt, a share path, a context path, an id, a title, reviewer.name). The
pools leave out what JSON cannot show and not-in-schema.txt explains (2.0
for 2, +5 for 5, 007 for 7, ids with a fraction, dependencies across
files, whether the target branch exists or a retry names a configured gate). The seed is fixed, so a run is repeatable; a mismatch is printed
with the YAML to reproduce it.
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fixtures as cf  # noqa: E402

VALUES = ['', '~', 'null', '[]', '{}', 'x', '"x"', '5', '0', '-3', '2.5', 'true', 'on', '"Yes"',
          '[a]', '[a, 5]', '[~]', '[[a]]', '[{a: b}]', '{command: [x]}',
          '{command: [x], timeout: 5m}', '{timeout: 5m}', '{a: b}', '90s', '"90"', 'reset',
          'gate.t', 'gate.zz', 'http://h/', 'manual', 'http', 'command', 'openai', 'sluice',
          'builder', 'none', 'aider', 'WO-1', '../x', 'a/b (n)', '"007"', '"5"', '1KiB', '0K']
SECTIONS = {
    'queue': ['inbox', 'jobs', 'allow_overlap', 'x'],
    'builder': ['command', 'preset', 'timeout', 'env', 'log_max'],
    'worktree': ['share', 'copy', 'setup', 'setup_timeout', 'hooks'],
    'gates': ['t', 'u-1', 'a b', 'v.w'],
    'reviewer': ['mode', 'url', 'protocol', 'model', 'token_env', 'timeout', 'connect_timeout',
                 'retries', 'command', 'max_reply', 'name'],
    'merge': ['resolver', 'resolve_attempts', 'verify', 'message'],
    'gc': ['keep_last', 'x'],
    'notify': ['command', 'url', 'timeout', 'retry_for', 'tries', 'x'],
}
# Values near the rules of each key (most pass, some are one step off);
# the generic VALUES above are drawn too, less often.
DURATION = ['90s', '30m', '2h', '1', '10000000', '10000001', '0s', '"120"', '5x', '090s']
SIZE = ['1', '512KiB', '10MiB', '1G', '0', '0K', '1KB', '"2M"', '1.5M']
ARGV = ['[a]', '[a, 5]', '[sh, -c, "x y"]', '[]', 'a', '[[a]]', '[~]']
NEAR = {
    'inbox': ['work_orders', 'a/b', '.', './x', '../x', '/abs', 'a/../b', 'a/..'],
    'jobs': ['1', '256', '257', '0', '"3"', '-1'],
    'tries': ['1', '100', '101', '0', '"3"', '-1'],
    'allow_overlap': ['true', 'off', 'Yes', '"on"', 'YES', 'oui', '1'],
    'command': ARGV, 'setup': ARGV,
    'preset': ['claude-code', 'codex', 'aider', 'gemini', 'Aider', 'copilot'],
    'timeout': DURATION, 'setup_timeout': DURATION, 'connect_timeout': DURATION,
    'retry_for': DURATION,
    'log_max': SIZE, 'max_reply': SIZE,
    'share': ['[node_modules]', '[a/.git]', '[.git]', '[./.Git/x]', '[.systemd]', '[.]', '[./]',
              '[a//b]', '["../x"]', '[/x]', '[""]', 'x'],
    'hooks': ['on', 'Off', 'FALSE', 'no', 'NO', '"true"'],
    't': ARGV + ['{command: [x]}', '{command: [x], timeout: 5m}', '{timeout: 5m}', '{command: [x], t: 1}'],
    'u-1': ARGV, 'a b': ARGV, 'v.w': ARGV, 'x': ['1'],
    'mode': ['manual', 'http', 'command', 'HTTP', 'cmd'],
    'url': ['http://h/r', 'https://h', 'ftp://h', 'h', 'http:/h'],
    'protocol': ['sluice', 'openai', 'OpenAI'],
    'model': ['m', '5', '~'], 'token_env': ['T', '~'],
    'retries': ['0', '100', '101', '-1'], 'resolve_attempts': ['0', '100', '101'],
    'name': ['bot', '"a\\tb"', '"x\\u007fy"', '"\\u0085"', '5'],
    'resolver': ['builder', 'none', 'ours'],
    'verify': ['true', 'off', 'maybe'],
    'message': ['"M {work_order.id}"', '"{run.nope}"', '"a } b"', '"{{x}}"', '"{reviewer"'],
    'keep_last': ['0', '1000000', '1000001', '-1'],
}
NEAR['copy'] = NEAR['share']
RETRY = ['{attempt: 2}', '{exit: 3}', '{not: gate.review}', '{not: gate.builder}', '{not: gate}', '{attempt: 2, exit: 3}',
         '{}', '{attempt: 0}', '{exit: 1001}', '{exit: 3, prompt: "{error}"}',
         '{attempt: 2, worktree: reset}', '{attempt: 2, worktree: keep}', '{attempt: 2, builder: [x]}',
         '{attempt: 2, validate: x}', 'x', '{validate: [v]}', '{validate: v}', '{validate: []}',
         '{validate: [v], with: {a: "{diff}"}, timeout: 5s}', '{validate: [v], with: {a: "{nope}"}}',
         '{validate: [v], with: [a]}', '{validate: [v], with: {a: ~}}', '{attempt: 2, with: {a: b}}',
         '{exit: 3, timeout: 5s}', '{attempt: 2, agent: codex}', '{attempt: 2, agent: ~}',
         '{attempt: 2, agent: [codex]}', '{attempt: 2, session: keep}', '{attempt: 2, session: new}',
         '{attempt: 2, session: maybe}', '{attempt: 2, session: ~}',
         '{attempt: 2, agent: aider, builder: [x]}', '{attempt: 2, agent: gemini, session: new}']
WO_KEYS = ['goal', 'context', 'acceptance_criteria', 'non_goals', 'stop_conditions', 'priority',
           'tags', 'status', 'estimate_hours', 'created_at', 'updated_at', 'title', 'other']
PIECES = {
    'target': list("ab.-/@{}~^:?*[\\ ") + ['.lock', 'HEAD', 'refs/', 'heads/', '..', '//', 'x', 'é'],
    'message': list("{}ab. \n") + ['{work_order.id}', '{run.id}', '{run.short}', '{run.nope}',
                                   '{reviewer}', '{{', '}}', '{work_order.', 'x'],
    'prompt': list("{}ab. ") + ['{error}', '{diff}', '{gate.t.output}', '{gate.t.exit}', '{nope}',
                                '{{', '}}', '{work_order.', '{work_order.x}', '{review.comments}'],
    'share': list("./aG") + ['.git', '.GIT', '.system', '..', './', '//', 'x'],
    'context': list("./a( )") + ['..', ' (', 'note)', '/', 'x', '\n'],
    'id': list("aZ09._-/ ") + ['.lock', '..', 'é', 'x' * 30, '+'],
    'title': ['a', 'é', '☃', '\t', '\x01', '\x85', '\u2028', '\u202e', '\u2066', '\u200b', 'a' * 60],
    'name': ['a', 'é', '☃', '\t', '\x01', '\x85', '\u202e', 'a' * 60],
}
STRING_CASE = {
    'target': 'target: %s\n',
    'message': 'target: main\nmerge:\n  message: %s\n',
    'prompt': 'target: main\ngates:\n  t: [x]\nretry:\n  - attempt: 2\n    prompt: %s\n  - exit: 3\n',
    'share': 'target: main\nworktree:\n  share: [%s]\n',
    'name': 'target: main\nreviewer:\n  name: %s\n',
    'context': '---\nid: W1\ntitle: t\ncontext:\n  - %s\n---\n',
    'id': '---\nid: %s\ntitle: t\n---\n',
    'title': '---\nid: W1\ntitle: %s\n---\n',
}


def quoted(s):
    return json.dumps(s, ensure_ascii=True)  # \u escapes: YAML refuses some raw controls


def random_config(rnd):
    lines = ['target: main']
    for sec in rnd.sample(sorted(SECTIONS) + ['retry', 'bogus'], rnd.choice([1, 1, 2, 3])):
        if sec == 'retry':
            if rnd.random() < 0.9:
                lines.append('retry: [%s]' % ', '.join(rnd.choice(RETRY)
                                                        for _ in range(rnd.randint(0, 3))))
            else:
                lines.append('retry: ' + rnd.choice(VALUES))
        elif sec == 'bogus':
            lines.append('bogus: 1')
        else:
            lines.append(sec + ':')
            for k in rnd.sample(SECTIONS[sec], min(rnd.choice([0, 1, 1, 2, 3]), len(SECTIONS[sec]))):
                if k == 'env' and rnd.random() < 0.7:
                    lines.append('  env: {%s: %s}' % (rnd.choice(['A', '_b', '1x', 'a-b']),
                                                     rnd.choice(VALUES)))
                else:
                    pool = NEAR[k] if k in NEAR and rnd.random() < 0.8 else VALUES
                    lines.append('  %s: %s' % (k, rnd.choice(pool)))
    return '\n'.join(lines) + '\n'


def random_work_order(rnd):
    fields = {'id': 'W1', 'title': 't'}
    for k in rnd.sample(WO_KEYS, rnd.randint(1, 3)):
        fields[k] = rnd.choice(VALUES)
    return '---\n' + ''.join('%s: %s\n' % kv for kv in fields.items()) + '---\n'


def random_string_case(rnd):
    kind = rnd.choice(sorted(PIECES))
    n = rnd.choice([0, 1, 3, 6]) if kind not in ('title', 'name') else rnd.choice([0, 1, 4, 5])
    s = ''.join(rnd.choice(PIECES[kind]) for _ in range(n))
    return STRING_CASE[kind] % quoted(s)


def main():
    sluice, repo, schema_dir = sys.argv[1:4]
    cases = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    rnd = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 11)
    wo_schema = cf.validator(schema_dir, 'work-order.schema.json')
    cfg_schema = cf.validator(schema_dir, 'config.schema.json')
    wo_path = os.path.join(repo, 'work_orders', 'W1.md')
    cfg_path = os.path.join(repo, '.system', 'config.yaml')
    os.makedirs(os.path.dirname(wo_path), exist_ok=True)
    mismatches = 0
    for _ in range(cases):
        pick = rnd.random()
        text = (random_config(rnd) if pick < 0.4 else random_work_order(rnd) if pick < 0.7
                else random_string_case(rnd))
        is_wo = text.startswith('---')
        if is_wo:
            with open(wo_path, 'w', encoding='utf-8') as f:
                f.write(text)
            with open(cfg_path, 'w', encoding='utf-8') as f:
                f.write('target: main\n')
        else:
            if os.path.exists(wo_path):
                os.remove(wo_path)
            with open(cfg_path, 'w', encoding='utf-8') as f:
                f.write(text)
        try:
            doc = cf.front_matter(text.encode()) if is_wo else cf.yaml_json(text.encode(), True)
            errors = list((wo_schema if is_wo else cfg_schema).iter_errors(doc))
            schema_says = 'refused' if errors else 'accepted'
        except cf.NotJSON as e:
            schema_says, errors = 'refused', ['not JSON: %s' % e]
        r = subprocess.run([sluice, '-C', repo, 'check'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        problems = [l for l in r.stdout.splitlines() if not l.startswith('ok:') and
                    ' found in the config' not in l]
        # whether the target branch exists is no rule of the schema (not-in-schema.txt)
        sluice_says = 'accepted' if r.returncode == 0 or problems and all(
            'is not a branch of this repository' in l for l in problems) else 'refused'
        if sluice_says != schema_says:
            mismatches += 1
            why = r.stdout.strip().splitlines()[0] if sluice_says == 'refused' else (
                getattr(errors[0], 'message', errors[0]))
            print('MISMATCH: sluice check %s, the schema %s (%s):\n%s' %
                  (sluice_says, schema_says, str(why)[:300], text))
    print('%d of %d random cases agree' % (cases - mismatches, cases))
    return 1 if mismatches else 0


if __name__ == '__main__':
    sys.exit(main())
