// A coding agent's conversation through kvrouter with the official Anthropic SDK: tools, tool_use
// and tool_result turns, streaming and not, alternating between two ingresses, against simulated
// vLLM engines that serve /v1/messages themselves or only OpenAI chat (the ingress translates).
// KVROUTER_URLS (comma-separated ingresses), KVROUTER_ENGINE_URLS (the engines, whose test-double
// endpoint /sim/requests says what each engine saw), KVROUTER_MODEL.
//   ./kvrouter demo &   cd clients && npm ci && node --test anthropic-agent.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

const urls = (process.env.KVROUTER_URLS ?? 'http://127.0.0.1:8080,http://127.0.0.1:8081').split(',');
const engineUrls = (
  process.env.KVROUTER_ENGINE_URLS ??
  'http://127.0.0.1:8000,http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003'
).split(',');
const model = process.env.KVROUTER_MODEL ?? 'kvrouter-demo';
const anthropics = urls.map((u) => new Anthropic({ baseURL: u, apiKey: 'unused', maxRetries: 0 }));
const openai = new OpenAI({ baseURL: `${urls[0]}/v1`, apiKey: 'unused', maxRetries: 0 });

const weather = {
  name: 'get_weather',
  description: 'The current weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
// A long, stable prefix, as agents send: several KV blocks that later turns find cached.
const system = 'You are a careful coding agent working in a large repository. '.repeat(12);

/** Every engine's request log: url -> highest seq seen. */
async function engineSeqs() {
  const out = new Map();
  for (const url of engineUrls) {
    const r = await (await fetch(`${url}/sim/requests`)).json();
    out.set(url, r.requests.length ? r.requests[r.requests.length - 1].seq : 0);
  }
  return out;
}

/** The requests engines received since `before`: [{engine, ...request}]. */
async function requestsSince(before) {
  const out = [];
  for (const url of engineUrls) {
    const r = await (await fetch(`${url}/sim/requests`)).json();
    for (const q of r.requests) {
      if (q.seq > before.get(url)) out.push({ engine: url, ...q });
    }
  }
  return out;
}

async function turn(client, params, stream) {
  if (!stream) return client.messages.create(params);
  const s = client.messages.stream(params);
  let jsonDeltas = 0;
  s.on('inputJson', () => jsonDeltas++);
  const message = await s.finalMessage();
  if (message.stop_reason === 'tool_use') assert.ok(jsonDeltas > 0, 'tool input streamed as input_json_delta');
  return message;
}

async function conversation(stream, city) {
  const messages = [{ role: 'user', content: `Please use get_weather for ${city}.` }];
  const params = () => ({ model, max_tokens: 12, system, tools: [weather], messages: [...messages] });
  let replica = null;
  const results = [];
  for (let i = 0; i < 4; i++) {
    const client = anthropics[i % anthropics.length];
    const counted = await client.messages.countTokens({ model, system, tools: [weather], messages: [...messages] });
    const before = await engineSeqs();
    const m = await turn(client, { ...params(), metadata: { user_id: `agent-${city}` } }, stream);
    const seen = await requestsSince(before);
    assert.equal(seen.length, 1, `turn ${i}: one engine request, got ${JSON.stringify(seen)}`);
    const engine = seen[0];
    replica ??= engine.engine;
    assert.equal(engine.engine, replica, `turn ${i} stays on its replica`);
    const prompt = m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0);
    assert.equal(counted.input_tokens, prompt, `turn ${i}: count_tokens equals the prompt the engine ran`);
    assert.equal(engine.prompt_tokens, prompt, `turn ${i}: usage is the engine's`);
    if (i > 0) {
      assert.ok(m.usage.cache_read_input_tokens > 0, `turn ${i}: cached tokens reported`);
      assert.equal(engine.cached_tokens, m.usage.cache_read_input_tokens);
    }
    results.push({ message: m, engine });
    if (i % 2 === 0) {
      assert.equal(m.stop_reason, 'tool_use', `turn ${i}: ${JSON.stringify(m)}`);
      const call = m.content.find((b) => b.type === 'tool_use');
      assert.equal(call.name, 'get_weather');
      assert.deepEqual(call.input, { city: 'sim' });
      messages.push({ role: 'assistant', content: m.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: `{"temp_c": ${10 + i}}` }],
      });
    } else {
      assert.deepEqual(engine.roles.slice(-2), ['assistant', 'tool'], 'the engine saw the tool result');
      assert.equal(m.stop_reason, 'max_tokens');
      assert.equal(m.content[0].type, 'text');
      messages.push({ role: 'assistant', content: m.content });
      messages.push({ role: 'user', content: 'Thanks. Now use get_weather for Rome.' });
    }
  }
  return results;
}

test('anthropic: a tool-using conversation, whole messages, keeps its replica and its cache', async () => {
  await conversation(false, 'Paris');
});

test('anthropic: a tool-using conversation, streamed, keeps its replica and its cache', async () => {
  await conversation(true, 'Lisbon');
});

test('anthropic: tool definitions count in the prompt as on the OpenAI endpoint', async () => {
  const messages = [{ role: 'user', content: 'What is the weather like?' }];
  const without = await anthropics[0].messages.countTokens({ model, system, messages });
  const withTools = await anthropics[1].messages.countTokens({ model, system, messages, tools: [weather] });
  assert.ok(withTools.input_tokens > without.input_tokens + 20, JSON.stringify({ without, withTools }));
  const chat = await openai.chat.completions.create({
    model,
    max_tokens: 1,
    messages: [{ role: 'system', content: system }, ...messages],
    tools: [
      {
        type: 'function',
        function: { name: weather.name, description: weather.description, parameters: weather.input_schema },
      },
    ],
  });
  assert.equal(chat.usage.prompt_tokens, withTools.input_tokens);
});

test('anthropic: refusals take Anthropic error shape and name the field', async () => {
  await assert.rejects(
    anthropics[0].messages.create({
      model,
      max_tokens: 4,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] }],
    }),
    (e) =>
      e instanceof Anthropic.BadRequestError &&
      e.error?.type === 'error' &&
      e.error?.error?.type === 'invalid_request_error' &&
      e.error.error.message.startsWith('messages.0.content.0.type'),
  );
  await assert.rejects(
    anthropics[1].messages.create({ model: 'no-such-model', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof Anthropic.NotFoundError && e.error?.error?.type === 'not_found_error',
  );
});
