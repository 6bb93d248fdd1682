// Agent sessions through kvrouter with the official OpenAI and Anthropic SDKs: a bounded bench of
// tool-calling programs, to compare the ingress with and without next-turn warming
// (kvrouter.ingress.programs.warm, docs/traffic.md). Each session is one agent of one kind: a
// shared system prompt and tool definitions (the prefix every session of the kind sends), then
// turns that end in a tool call (`tool_choice` required / any), whose result (hundreds to
// thousands of tokens) is appended before the next turn after a tool run (a heavy-tailed gap), so
// the history grows every turn; the last turn is answered with text. Half the sessions are OpenAI
// chat completions (streamed, `X-Session-ID`), half Anthropic messages (streamed,
// `metadata.user_id`). It prints one JSON line: continuing-turn TTFT p50/p90 (first content or
// tool-call delta), session completion time p50/p90 (first request to last answer, tool runs
// included), the continuing turns' prompt and cached tokens, and the ingress's warm counters.
//
//   KVROUTER_WARM=on ./kvrouter demo &      (or without KVROUTER_WARM for warming off)
//   cd system-tests/clients && npm ci && node agent-bench.mjs
//
// KVROUTER_URLS (comma-separated ingresses; sessions alternate), KVROUTER_MODEL, BENCH_SESSIONS
// (default 16), BENCH_TURNS (8), BENCH_CONCURRENCY (4), BENCH_SEED (1), BENCH_GAP_MEDIAN_MS (300),
// BENCH_GAP_MAX_MS (3000). Bounded: sessions x turns requests, each with max_tokens 24.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const env = (name, fallback) => process.env[name] ?? fallback;
const urls = env('KVROUTER_URLS', 'http://127.0.0.1:8080,http://127.0.0.1:8081').split(',');
const model = env('KVROUTER_MODEL', 'kvrouter-demo');
const sessions = Number(env('BENCH_SESSIONS', 16));
const turns = Number(env('BENCH_TURNS', 8));
const concurrency = Number(env('BENCH_CONCURRENCY', 4));
const seed = Number(env('BENCH_SEED', 1));
const gapMedian = Number(env('BENCH_GAP_MEDIAN_MS', 300));
const gapMax = Number(env('BENCH_GAP_MAX_MS', 3000));

/** mulberry32: a small seeded generator, so both runs send the same sessions. */
function rng(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vek', 'do', 'ri', 'pan', 'el', 'os', 'qui', 'zar'];
function words(random, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(random() * 3);
    let w = '';
    for (let j = 0; j < n; j++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    out.push(w);
  }
  return out.join(' ');
}

/** A tool run: log-normal around the median (sigma 1), capped; agent tool runs are heavy-tailed. */
function gap(random) {
  const u1 = Math.max(random(), 1e-9);
  const u2 = random();
  const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.min(gapMax, gapMedian * Math.exp(normal));
}

// Two agent kinds, each with its own shared prefix: a long system prompt and tool definitions.
const TOOL_NAMES = ['read_file', 'grep', 'run_tests', 'edit_file'];
function kind(k) {
  const random = rng(1000 + k);
  const system = `You are agent kind ${k}, a careful coding agent. ` + words(random, 2500);
  const tools = TOOL_NAMES.map((name) => ({
    name,
    description: words(random, 120),
    schema: {
      type: 'object',
      properties: { path: { type: 'string' }, line: { type: 'integer' } },
      required: ['path', 'line'],
    },
  }));
  return { system, tools };
}
const KINDS = [kind(0), kind(1)];

const openais = urls.map((u) => new OpenAI({ baseURL: `${u}/v1`, apiKey: 'unused', maxRetries: 0 }));
const anthropics = urls.map((u) => new Anthropic({ baseURL: u, apiKey: 'unused', maxRetries: 0 }));

const continuing = []; // {ttft, prompt, cached}
const completions = []; // ms per session

async function openaiSession(index, random, agent, client) {
  const id = `bench-${seed}-${index}`;
  const tools = agent.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.schema },
  }));
  const messages = [
    { role: 'system', content: agent.system },
    { role: 'user', content: `Task ${index}: use ${TOOL_NAMES[index % 4]} to ` + words(random, 40) },
  ];
  for (let turn = 0; turn < turns; turn++) {
    const last = turn === turns - 1;
    const sent = performance.now();
    let ttft = null;
    const stream = await client.chat.completions.create(
      {
        model,
        messages,
        tools,
        tool_choice: last ? 'auto' : 'required',
        max_tokens: 24,
        stream: true,
        stream_options: { include_usage: true },
      },
      { headers: { 'X-Session-ID': id } },
    );
    let content = '';
    const calls = [];
    let usage = null;
    for await (const chunk of stream) {
      const delta = chunk.choices?.[0]?.delta;
      if (delta && ttft === null && (delta.content || delta.tool_calls)) ttft = performance.now() - sent;
      if (delta?.content) content += delta.content;
      for (const c of delta?.tool_calls ?? []) {
        calls[c.index] ??= { id: c.id, type: 'function', function: { name: '', arguments: '' } };
        if (c.id) calls[c.index].id = c.id;
        if (c.function?.name) calls[c.index].function.name += c.function.name;
        if (c.function?.arguments) calls[c.index].function.arguments += c.function.arguments;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    if (turn > 0) {
      continuing.push({
        ttft,
        prompt: usage?.prompt_tokens ?? 0,
        cached: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      });
    }
    if (last) return;
    if (calls.length === 0) throw new Error(`session ${id} turn ${turn}: no tool call`);
    messages.push({ role: 'assistant', content: content || null, tool_calls: calls });
    await new Promise((r) => setTimeout(r, gap(random)));
    for (const c of calls) {
      messages.push({ role: 'tool', tool_call_id: c.id, content: words(random, 200 + Math.floor(random() * 800)) });
    }
  }
}

async function anthropicSession(index, random, agent, client) {
  const id = `bench-${seed}-${index}`;
  const tools = agent.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema }));
  const messages = [{ role: 'user', content: `Task ${index}: use ${TOOL_NAMES[index % 4]} to ` + words(random, 40) }];
  for (let turn = 0; turn < turns; turn++) {
    const last = turn === turns - 1;
    const sent = performance.now();
    let ttft = null;
    const stream = client.messages.stream({
      model,
      max_tokens: 24,
      system: agent.system,
      tools,
      tool_choice: { type: last ? 'auto' : 'any' },
      messages,
      metadata: { user_id: id },
    });
    stream.on('streamEvent', (event) => {
      if (ttft === null && (event.type === 'content_block_start' || event.type === 'content_block_delta')) {
        ttft = performance.now() - sent;
      }
    });
    const message = await stream.finalMessage();
    if (turn > 0) {
      continuing.push({
        ttft,
        prompt: message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0),
        cached: message.usage.cache_read_input_tokens ?? 0,
      });
    }
    if (last) return;
    const uses = message.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) throw new Error(`session ${id} turn ${turn}: no tool_use`);
    messages.push({ role: 'assistant', content: message.content });
    await new Promise((r) => setTimeout(r, gap(random)));
    messages.push({
      role: 'user',
      content: uses.map((u) => ({
        type: 'tool_result',
        tool_use_id: u.id,
        content: words(random, 200 + Math.floor(random() * 800)),
      })),
    });
  }
}

async function session(index) {
  const random = rng(seed * 7919 + index);
  const agent = KINDS[index % KINDS.length];
  const at = index % urls.length;
  const started = performance.now();
  if (index % 2 === 0) await openaiSession(index, random, agent, openais[at]);
  else await anthropicSession(index, random, agent, anthropics[at]);
  completions.push(performance.now() - started);
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The ingresses' kvrouter_program_warm_total, summed per outcome. */
async function warmCounters() {
  const out = {};
  for (const u of urls) {
    const text = await (await fetch(`${u}/metrics`)).text();
    for (const line of text.split('\n')) {
      const m = line.match(/^kvrouter_program_warm_total\{.*outcome="([a-z_]+)".*\} ([0-9.eE+-]+)$/);
      if (m) out[m[1]] = (out[m[1]] ?? 0) + Number(m[2]);
    }
  }
  return out;
}

const before = await warmCounters();
const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(concurrency, sessions) }, async () => {
    while (next < sessions) await session(next++);
  }),
);
const after = await warmCounters();
const warms = {};
for (const [k, v] of Object.entries(after)) warms[k] = v - (before[k] ?? 0);

const ttfts = continuing.map((c) => c.ttft);
const prompt = continuing.reduce((s, c) => s + c.prompt, 0);
const cached = continuing.reduce((s, c) => s + c.cached, 0);
const round = (x) => (x === null ? null : Math.round(x * 10) / 10);
console.log(
  JSON.stringify({
    sessions,
    turns,
    concurrency,
    seed,
    continuing_turns: continuing.length,
    continuing_ttft_p50_ms: round(quantile(ttfts, 0.5)),
    continuing_ttft_p90_ms: round(quantile(ttfts, 0.9)),
    session_p50_ms: round(quantile(completions, 0.5)),
    session_p90_ms: round(quantile(completions, 0.9)),
    continuing_prompt_tokens: prompt,
    continuing_cached_tokens: cached,
    continuing_missing_tokens: prompt - cached,
    warms,
    wall_s: round((performance.now() - started) / 1000),
  }),
);
