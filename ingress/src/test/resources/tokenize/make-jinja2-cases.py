"""Writes jinja2-cases.json: templates rendered by Python jinja2 configured as HF transformers
configures it (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, tojson as
json.dumps(ensure_ascii=False), raise_exception). Regenerate with
  python3 make-jinja2-cases.py /path/to/qwen3/tokenizer_config.json > jinja2-cases.json
(produced with jinja2 3.1.6). The Java side must render every case identically."""
import json, sys
import jinja2, jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

def raise_exception(m):
    raise jinja2.exceptions.TemplateError(m)

def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                    extensions=[jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception

idioms = {
    "slices": "{{ (xs[::-1]|join(',')) }}|{{ xs[1:]|join(',') }}|{{ xs[-2:]|join(',') }}|{{ xs[::2]|join(',') }}|{{ xs[:-1]|join(',') }}|{{ s[::-1] }}|{{ s[1:3] }}|{{ xs[5:]|length }}|{{ xs[-1] }}",
    "string_methods": "{{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\nhi\\n'.lstrip('\\n') }}|{{ 'hi\\n\\n'.rstrip('\\n') }}|{{ 'a</t>'.split('</t>')|length }}|{{ 'a</t>'.split('</t>')[-1] }}|{{ 'a,b,,c'.split(',')|join('+') }}|{{ ' a  b '.split()|join('+') }}|{{ 'T' if 'abc'.startswith('ab') else 'F' }}|{{ 'T' if 'abc'.endswith('bc') else 'F' }}|{{ 'T' if 'abc'.startswith('x') else 'F' }}|{{ 'a-b-c'.split('-', 1)|join('+') }}|{{ 'AbC'.upper() }}{{ 'AbC'.lower() }}|{{ 'aaa'.replace('a','b') }}|{{ ', '.join(xs) }}",
    "namespace_with_arithmetic_kwarg": "{% set ns = namespace(n=xs|length - 1, flag=true) %}{% for x in xs %}{% if x == 'c' %}{% set ns.n = ns.n + 10 %}{% set ns.flag = false %}{% endif %}{% endfor %}{{ ns.n }} {{ 'T' if ns.flag else 'F' }}",
    "tojson": "{{ obj|tojson }}\n{{ obj|tojson(indent=2) }}\n{{ obj|tojson(sort_keys=true) }}",
    "loopcontrols": "{% for x in xs %}{% if x == 'b' %}{% continue %}{% endif %}{% if x == 'd' %}{% break %}{% endif %}{{ x }}{% endfor %}",
    "trim_and_lstrip_blocks": "{% for x in xs %}\n    {{ x }}\n{% endfor %}\n  {#- c -#}\nend\n  {%- if true %}\n  yes\n  {% endif %}\n",
}
ctx = {"xs": ["a", "b", "c", "d"], "s": "héllo",
       "obj": {"b": 1, "a": [1.5, True, None, "x\"y\\z\n\u00e9\u6771\U0001F31E\u0001"], "c": {}, "d": [],
               "e": 1e16, "f": 1e-05, "g": 100.0, "h": -0.25}}
out = {"context": ctx, "idioms": [], "qwen3_conversations": []}
for name, src in idioms.items():
    out["idioms"].append({"name": name, "template": src, "rendered": env.from_string(src).render(**ctx)})

qwen3 = json.load(open(sys.argv[1]))["chat_template"]
weather = {"type": "function", "function": {"name": "get_weather", "description": "Wetter für eine Stadt",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}}
conversations = [
    {"name": "reasoning_content_after_last_query",
     "messages": [{"role": "user", "content": "2+2?"},
                  {"role": "assistant", "content": "4", "reasoning_content": "\nadd them\n"}],
     "add_generation_prompt": False},
    {"name": "system_with_tools_and_string_arguments_and_parallel_calls",
     "tools": [weather],
     "messages": [{"role": "system", "content": "Be terse."},
                  {"role": "user", "content": "Paris and Köln?"},
                  {"role": "assistant", "content": "Checking.", "tool_calls": [
                      {"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
                      {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Köln", "days": 2}}}]},
                  {"role": "tool", "content": "sunny"},
                  {"role": "tool", "content": "rain"}],
     "add_generation_prompt": True},
    {"name": "multi_step_tool_keeps_thinking_of_current_turn",
     "messages": [{"role": "user", "content": "Weather?"},
                  {"role": "assistant", "content": "<think>\nneed tool\n</think>\n\n", "tool_calls": [
                      {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
                  {"role": "user", "content": "<tool_response>\n-3C\n</tool_response>"},
                  {"role": "assistant", "content": "<think>got it</think>It is -3C."}],
     "add_generation_prompt": False},
    {"name": "second_system_message_and_thinking_enabled",
     "messages": [{"role": "system", "content": "A"}, {"role": "user", "content": "B"},
                  {"role": "system", "content": "C"}, {"role": "user", "content": "D"}],
     "add_generation_prompt": True, "enable_thinking": True},
]
for case in conversations:
    kwargs = {k: v for k, v in case.items() if k not in ("name",)}
    case["rendered"] = env.from_string(qwen3).render(**kwargs)
    out["qwen3_conversations"].append(case)
print(json.dumps(out, ensure_ascii=False, indent=1))
