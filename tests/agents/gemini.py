"""gemini protocol of fake_model.py: the Gemini API as Gemini CLI 0.61 uses it.

Gemini CLI, pointed here by GOOGLE_GEMINI_BASE_URL (which makes its auth
type "gateway") with any GEMINI_API_KEY, sends

    POST /v1beta/models/<model>:streamGenerateContent?alt=sse

for every turn of the agent, and answers come back as server-sent events,
each `data:` line one GenerateContentResponse. It may also send
:generateContent (its internal side questions: a JSON answer is asked for
with generationConfig.responseMimeType, e.g. the model router's classifier
or the next-speaker check), :countTokens, and GET /v1beta/models.

The script: a turn whose last user content carries no functionResponse
gets a functionCall of write_file (Gemini CLI's file-writing tool, args
file_path and content) for --edit; the turn that carries write_file's
functionResponse gets a run_shell_command of SHELL_CHECK (git's status and
the gates of $SLUICE_GATE_COMMANDS: what an agent runs unattended; its
output comes back in the functionResponse, so a test sees that it ran); the
turn that carries that one's functionResponse gets the --final text and
finishReason STOP.
"""
import json

PREFIX = "/v1beta/models"
SHELL_CHECK = ('git status --porcelain && printf "gate: %s\\n" "$SLUICE_GATE_COMMANDS" && '
               'eval "${SLUICE_GATE_COMMANDS:-true}" && echo "the gates pass"')


def _usage():
    return {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}


def _chunk(parts, model, last=True):
    cand = {"content": {"role": "model", "parts": parts}, "index": 0}
    if last:
        cand["finishReason"] = "STOP"
    return {
        "candidates": [cand],
        "usageMetadata": _usage(),
        "modelVersion": model,
        "responseId": "fake-gemini-response",
    }


def _has_function_response(body, name):
    """True when the last user content of the request answers tool NAME."""
    contents = (body or {}).get("contents") or []
    for content in reversed(contents):
        if content.get("role", "user") != "user":
            continue
        for part in content.get("parts") or []:
            resp = part.get("functionResponse")
            if resp and resp.get("name") == name:
                return True
        return False
    return False


def _turn_chunks(req):
    """The parts of this turn's answer, one list a streamed chunk.

    As a real model does, the first turn says something before its tool
    call: that text is not the final answer and must not become the
    run's summary. The final text comes in two chunks."""
    if _has_function_response(req.json, "run_shell_command"):
        half = len(req.final) // 2
        return [[{"text": req.final[:half]}], [{"text": req.final[half:]}]]
    if _has_function_response(req.json, "write_file"):
        return [[{"functionCall": {
            "name": "run_shell_command",
            "args": {"command": SHELL_CHECK, "description": "Run the gates."},
        }}]]
    return [
        [{"text": "(not the final answer) I will write %s.\n" % req.edit_path}],
        [{"functionCall": {
            "name": "write_file",
            "args": {"file_path": req.edit_path, "content": req.edit_content},
        }}],
    ]


def _fill(schema):
    """A value of the JSON schema SCHEMA (the types in either case)."""
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _fill(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 10
    if kind == "boolean":
        return False
    return "fake"


def _side_answer(body):
    """A harmless answer to an internal generateContent question (the
    model router's classifier, the next-speaker check...): JSON of the
    schema asked for, the user speaks next."""
    cfg = (body or {}).get("generationConfig") or {}
    if cfg.get("responseMimeType") != "application/json":
        return "ok"
    schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {}
    value = _fill(schema)
    if isinstance(value, dict) and "next_speaker" in value:
        value["next_speaker"] = "user"
    return json.dumps(value)


def handle(req):
    path, _, query = req.path.partition("?")
    if not path.startswith(PREFIX):
        return False
    if req.method == "GET":
        req.send_json({"models": [{"name": "models/gemini-2.5-pro",
                                   "supportedGenerationMethods": ["generateContent"]}]})
        return True
    model, _, method = path[len(PREFIX) + 1:].partition(":")
    if method == "countTokens":
        req.send_json({"totalTokens": 10})
        return True
    if method == "generateContent":
        if req.json and req.json.get("tools"):
            parts = [p for chunk in _turn_chunks(req) for p in chunk]
            req.send_json(_chunk(parts, model))
        else:
            req.send_json(_chunk([{"text": _side_answer(req.json)}], model))
        return True
    if method == "streamGenerateContent":
        chunks = _turn_chunks(req)
        req.start_sse()
        for i, parts in enumerate(chunks):
            req.sse(_chunk(parts, model, last=i == len(chunks) - 1))
        return True
    return False
