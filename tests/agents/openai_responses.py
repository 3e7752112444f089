"""openai_responses protocol of fake_model.py: the OpenAI Responses API
as codex 0.169 speaks it (t0961-agent-codex.sh).

codex sends POST {base_url}/responses with "stream": true and reads
server-sent events (response.created, response.output_item.added,
response.output_text.delta, response.output_item.done,
response.completed). A turn of the script:

- no tool result in the request's input yet: answer with a call of
  codex's own file-writing tool, apply_patch (a "custom" freeform tool
  when the request offers it: the patch is the call's input), or, when
  the request offers no apply_patch (a model codex has no metadata for),
  exec_command with a shell line that writes the file;
- when the prompt has a line "sluice-fake-model-shell: CMD" (t0961 puts
  one in a work order to have the model try `git commit`), the next turn
  calls exec_command with CMD, as a model asked to commit would;
- the input carries the result of every call (custom_tool_call_output /
  function_call_output with our call_ids): answer with the final text as
  an assistant message, which `codex exec --output-last-message` keeps.

Only paths under /v1/ are answered (the base_url the test configures).
A GET /v1/models gets one model, so that model discovery, when
codex tries it, finds what the config names.
"""
import json
import shlex

CALL_ID = "call_sluice_edit_1"
SHELL_ID = "call_sluice_shell_1"
SHELL_MARK = "sluice-fake-model-shell: "


def _tool_names(body):
    names = set()
    for t in body.get("tools") or []:
        if isinstance(t, dict) and t.get("name"):
            names.add(t["name"])
    return names


def _results(body):
    """The call_ids whose results the request's input carries."""
    inp = body.get("input")
    ids = set()
    for item in inp if isinstance(inp, list) else []:
        if (isinstance(item, dict)
                and item.get("type") in ("function_call_output", "custom_tool_call_output")):
            ids.add(item.get("call_id"))
    return ids


def _shell_request(body):
    """CMD of the prompt's "sluice-fake-model-shell: CMD" line, or None."""
    inp = body.get("input")
    for item in inp if isinstance(inp, list) else []:
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        for c in item.get("content") or []:
            for line in str(c.get("text") or "").splitlines():
                if line.startswith(SHELL_MARK):
                    return line[len(SHELL_MARK):]
    return None


def _shell_item(cmd, call_id):
    return {"type": "function_call", "id": "fc_" + call_id, "status": "completed",
            "call_id": call_id, "name": "exec_command",
            "arguments": json.dumps({"cmd": cmd})}


def _patch(path, content):
    lines = content.split("\n")
    return ("*** Begin Patch\n*** Add File: %s\n" % path
            + "".join("+%s\n" % ln for ln in lines) + "*** End Patch")


def _tool_item(req, tools):
    if "apply_patch" in tools:
        return {"type": "custom_tool_call", "id": "ctc_sluice_1", "status": "completed",
                "call_id": CALL_ID, "name": "apply_patch",
                "input": _patch(req.edit_path, req.edit_content)}
    cmd = "printf '%%s\\n' %s > %s" % (shlex.quote(req.edit_content),
                                      shlex.quote(req.edit_path))
    return _shell_item(cmd, CALL_ID)


def _message_item(text):
    return {"type": "message", "id": "msg_sluice_final", "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _stream(req, model, rid, item):
    base = {"id": rid, "object": "response", "model": model, "status": "in_progress",
            "output": []}
    req.start_sse()
    req.sse({"type": "response.created", "response": base}, "response.created")
    req.sse({"type": "response.output_item.added", "output_index": 0, "item": item},
            "response.output_item.added")
    if item["type"] == "message":
        text = item["content"][0]["text"]
        req.sse({"type": "response.output_text.delta", "item_id": item["id"],
                 "output_index": 0, "content_index": 0, "delta": text},
                "response.output_text.delta")
    req.sse({"type": "response.output_item.done", "output_index": 0, "item": item},
            "response.output_item.done")
    done = dict(base, status="completed", output=[item],
                usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 15})
    req.sse({"type": "response.completed", "response": done}, "response.completed")


def handle(req):
    path = req.path.split("?", 1)[0]
    if not path.startswith("/v1/"):
        return False
    if req.method == "GET" and path == "/v1/models":
        req.send_json({"object": "list", "data": [
            {"id": "fake-model", "object": "model", "owned_by": "sluice-tests"}]})
        return True
    if req.method != "POST" or not path.endswith("/responses"):
        return False
    body = req.json if isinstance(req.json, dict) else {}
    model = body.get("model") or "fake-model"
    done = _results(body)
    shell = _shell_request(body)
    if CALL_ID not in done:
        _stream(req, model, "resp_sluice_1", _tool_item(req, _tool_names(body)))
    elif shell is not None and SHELL_ID not in done:
        _stream(req, model, "resp_sluice_2", _shell_item(shell, SHELL_ID))
    else:
        _stream(req, model, "resp_sluice_3", _message_item(req.final))
    return True
