"""Renders tool_cases.json's expected prompts with Python jinja2, as vLLM and transformers do.

Each case is an OpenAI chat request as a client sends it (tool-call arguments as JSON strings,
tools possibly without a description). The request is first normalized the way vLLM normalizes it
before applying the chat template (vllm/entrypoints/chat_utils.py: _parse_chat_message_content and
_postprocess_messages; vllm/entrypoints/openai/engine/protocol.py: FunctionDefinition, dumped with
model_dump()), then rendered in the environment transformers builds for apply_chat_template
(transformers/utils/chat_template_utils.py: ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks and loopcontrols; tojson as json.dumps(ensure_ascii=False); raise_exception).

    python3 render_tool_cases.py path/to/tokenizer_config.json   # rewrites tool_cases.json
"""
import json
import sys
from pathlib import Path

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def raise_exception(message):
    raise TemplateError(message)


def dump_tool(tool):
    fn = tool.get("function", {})
    out_fn = {"name": fn.get("name"), "description": fn.get("description"),
              "parameters": fn.get("parameters")}
    out_fn.update({k: v for k, v in fn.items() if k not in out_fn})
    out = {"type": "function", "function": out_fn}
    out.update({k: v for k, v in tool.items() if k not in ("type", "function")})
    return out


def parse_args(args):
    if isinstance(args, dict):
        return args
    if isinstance(args, str) and args:
        try:
            parsed = json.loads(args)
        except json.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def content_string(content):
    """Content for a template of vLLM's "string" content format (Qwen3's): text parts joined."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if p.get("type") == "text")
    return content


def normalize(message):
    out = {"role": message["role"], "content": content_string(message.get("content"))}
    if message["role"] == "assistant":
        calls = message.get("tool_calls")
        if calls:
            out["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": parse_args(c["function"].get("arguments"))}}
                for c in calls]
        if message.get("reasoning") is not None:
            out["reasoning"] = message["reasoning"]
            out["reasoning_content"] = message["reasoning"]
    elif message["role"] == "tool" and "tool_call_id" in message:
        out["tool_call_id"] = message["tool_call_id"]
    if isinstance(message.get("name"), str):
        out["name"] = message["name"]
    return out


def main():
    config = json.loads(Path(sys.argv[1]).read_text())
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    template = env.from_string(config["chat_template"])
    path = Path(__file__).with_name("tool_cases.json")
    cases = json.loads(path.read_text())
    for case in cases["cases"]:
        tools = [dump_tool(t) for t in case["tools"]] if case.get("tools") else None
        kwargs = {"enable_thinking": case["enable_thinking"]} if "enable_thinking" in case else {}
        case["rendered"] = template.render(
            messages=[normalize(m) for m in case["messages"]], tools=tools,
            add_generation_prompt=case["add_generation_prompt"],
            bos_token=config.get("bos_token"), eos_token=config.get("eos_token"), **kwargs)
    path.write_text(json.dumps(cases, ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    main()
