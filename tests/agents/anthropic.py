"""anthropic protocol of fake_model.py: the Anthropic Messages API.

What Claude Code 2.1.100 sends in `claude -p` (recorded against this server):
  HEAD /                       a connection warm-up (the server answers 501:
                               harmless, not recorded)
  POST /v1/messages?beta=true  {"model": "claude-sonnet-4-6", "stream": true,
      "tools": [Bash, Edit, Write, Read, Glob, Grep, ...], "system": [...],
      "messages": [...], "thinking", "context_management", "metadata"}
      with anthropic-version 2023-06-01 and anthropic-beta headers: one a
      turn, the whole conversation each time (tool results in a user
      message's tool_result blocks). Answered with SSE events message_start,
      content_block_start, content_block_delta (text_delta, or
      input_json_delta for a tool's input), content_block_stop,
      message_delta (stop_reason tool_use or end_turn), message_stop.
  Nothing else when CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (without it,
  bootstrap, metrics and event logging go to api.anthropic.com itself).
  A POST /v1/messages without tools (none seen) gets a short text answer,
  streamed or not as asked; /v1/messages/count_tokens (none seen) a count.

The script: while no tool result is in the conversation, the model asks
for the Write tool (file --edit, absolute path in the working directory
the system prompt names); after its result, when FAKE_MODEL_BASH (in
fake_model.py's environment) holds commands, one a line, a Bash call of
each (ids toolu_fake_bash_0, _1, ...: their results, in the next recorded
request, say whether Claude Code ran or refused them); then --final.
"""
import json
import os
import shlex
import re

MODEL = "claude-sonnet-4-6"


def _text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict) and b.get("type") == "text":
            out.append(b.get("text", ""))
    return "\n".join(out)


def _system_text(body):
    s = body.get("system")
    if isinstance(s, list):
        return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return s or ""


def _workdir(body):
    """The working directory Claude Code names in its system prompt."""
    texts = [_system_text(body)] + [_text_of(m.get("content")) for m in body.get("messages", [])]
    for t in texts:
        m = re.search(r"(?:Primary working directory|Working directory): *(\S+)", t)
        if m:
            return m.group(1)
    return None


def _tool_results(body):
    """The ids of the tool results in the conversation."""
    ids = []
    for m in body.get("messages", []):
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                ids.append(b.get("tool_use_id"))
    return ids


def _tool_names(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def _demo(req, body, names, done):
    """FAKE_MODEL_DEMO=1 (scripts/demo.sh, DEMO_BUILDER=claude-code): the work
    order's ```agent block as the CLI's own tool calls (demo_plan.py): Read
    what is to be rewritten (Claude Code writes no file it has not read),
    then Write and Bash rm, then the final answer."""
    import demo_plan
    if any(i and i.startswith("toolu_demo_write") for i in done):
        return [{"type": "text", "text": "Did what the work order's block says."}], "end_turn"
    plan = demo_plan.demo_plan(req.raw.decode("utf-8", errors="replace"))
    if plan is None:
        return [{"type": "text", "text": "No work found for me."}], "end_turn"
    cwd = plan["cwd"]
    reads = [r for r in plan["writes"] if os.path.exists(os.path.join(cwd, r))]
    if reads and not any(i and i.startswith("toolu_demo_read") for i in done):
        return [{"type": "tool_use", "id": "toolu_demo_read_%d" % i, "name": "Read",
                 "input": {"file_path": os.path.join(cwd, r)}}
                for i, r in enumerate(reads)], "tool_use"
    blocks = [{"type": "tool_use", "id": "toolu_demo_write_%d" % i, "name": "Write",
               "input": {"file_path": os.path.join(cwd, r), "content": c}}
              for i, (r, c) in enumerate(sorted(plan["writes"].items()))]
    blocks += [{"type": "tool_use", "id": "toolu_demo_write_rm_%d" % i, "name": "Bash",
                "input": {"command": "rm -f " + shlex.quote(r), "description": "Remove " + r}}
               for i, r in enumerate(plan["deletes"])]
    if not blocks:
        return [{"type": "text", "text": "Nothing to change."}], "end_turn"
    return blocks, "tool_use"


def _plan(req, body):
    """The content blocks of the model's answer and its stop reason."""
    names = _tool_names(body)
    done = _tool_results(body)
    if os.environ.get("FAKE_MODEL_DEMO") == "1" and "Write" in names:
        return _demo(req, body, names, done)
    bash = [c for c in os.environ.get("FAKE_MODEL_BASH", "").split("\n") if c]
    if "Write" in names and not done:
        d = _workdir(body)
        path = os.path.join(d, req.edit_path) if d else req.edit_path
        return [{"type": "tool_use", "id": "toolu_fake_write", "name": "Write",
                 "input": {"file_path": path, "content": req.edit_content + "\n"}}], "tool_use"
    if "Bash" in names and bash and "toolu_fake_bash_0" not in done:
        return [{"type": "tool_use", "id": "toolu_fake_bash_%d" % i, "name": "Bash",
                 "input": {"command": cmd, "description": "Run %s" % cmd}}
                for i, cmd in enumerate(bash)], "tool_use"
    if names:
        return [{"type": "text", "text": req.final}], "end_turn"
    return [{"type": "text", "text": "fake"}], "end_turn"


def _usage():
    return {"input_tokens": 10, "output_tokens": 10,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _stream(req, blocks, stop):
    req.start_sse()
    msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL,
           "content": [], "stop_reason": None, "stop_sequence": None, "usage": _usage()}
    req.sse({"type": "message_start", "message": msg}, "message_start")
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": b["text"]}
        else:
            start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
        req.sse({"type": "content_block_start", "index": i, "content_block": start},
                "content_block_start")
        req.sse({"type": "content_block_delta", "index": i, "delta": delta}, "content_block_delta")
        req.sse({"type": "content_block_stop", "index": i}, "content_block_stop")
    req.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": 10}}, "message_delta")
    req.sse({"type": "message_stop"}, "message_stop")


def handle(req):
    path = req.path.split("?")[0]
    if not path.startswith("/v1/messages") or req.method != "POST":
        return False
    body = req.json if isinstance(req.json, dict) else {}
    if path.endswith("/count_tokens"):
        req.send_json({"input_tokens": 100})
        return True
    blocks, stop = _plan(req, body)
    if body.get("stream"):
        _stream(req, blocks, stop)
        return True
    req.send_json({"id": "msg_fake", "type": "message", "role": "assistant", "model": MODEL,
                   "content": blocks, "stop_reason": stop, "stop_sequence": None,
                   "usage": _usage()})
    return True
