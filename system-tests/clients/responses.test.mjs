// The OpenAI Responses API through kvrouter with the official openai SDK, against simulated vLLM
// engines that serve /v1/responses (with their response store on): whole and streamed, a
// previous_response_id conversation that moves between ingresses and stays on its replica, and a
// function call. KVROUTER_URLS, KVROUTER_ENGINE_URLS, KVROUTER_MODEL as in anthropic-agent.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const urls = (process.env.KVROUTER_URLS ?? 'http://127.0.0.1:8080,http://127.0.0.1:8081').split(',');
const engineUrls = (
  process.env.KVROUTER_ENGINE_URLS ??
  'http://127.0.0.1:8000,http://127.0.0.1:8001,http://127.0.0.1:8002,http://127.0.0.1:8003'
).split(',');
const model = process.env.KVROUTER_MODEL ?? 'kvrouter-demo';
const clients = urls.map((u) => new OpenAI({ baseURL: `${u}/v1`, apiKey: 'unused', maxRetries: 0 }));
const instructions = 'You answer questions about a large codebase, briefly and precisely. '.repeat(10);

/** Runs `call` and returns [its result, the one engine that served it]. */
async function served(call) {
  const before = new Map();
  for (const url of engineUrls) {
    const r = await (await fetch(`${url}/sim/requests`)).json();
    before.set(url, r.requests.length ? r.requests[r.requests.length - 1].seq : 0);
  }
  const result = await call();
  const engines = [];
  for (const url of engineUrls) {
    const r = await (await fetch(`${url}/sim/requests`)).json();
    if (r.requests.some((q) => q.seq > before.get(url))) engines.push(url);
  }
  assert.equal(engines.length, 1, `one engine served it: ${engines}`);
  return [result, engines[0]];
}

test('responses: create, then continue with previous_response_id through the other ingress', async () => {
  const [first, engine] = await served(() =>
    clients[0].responses.create({ model, instructions, input: 'Where is the router?', max_output_tokens: 8 }),
  );
  assert.equal(first.object, 'response');
  assert.match(first.id, /\.kvr\./, 'the id names its replica');
  assert.equal(typeof first.output_text, 'string');
  assert.ok(first.output_text.length > 0);
  assert.ok(first.usage.input_tokens > 0);
  const [second, again] = await served(() =>
    clients[1].responses.create({
      model,
      previous_response_id: first.id,
      input: 'And the tracker?',
      max_output_tokens: 8,
    }),
  );
  assert.equal(again, engine, 'the follow-up reached the engine that holds the conversation');
  assert.equal(second.previous_response_id, first.id);
  assert.ok(
    second.usage.input_tokens_details.cached_tokens > first.usage.input_tokens / 2,
    `the engine holding the conversation served it from its cache: ${JSON.stringify(second.usage)}`,
  );
  assert.ok(second.usage.input_tokens > first.usage.input_tokens, 'the engine prepended the stored turn');
});

test('responses: streamed events end in response.completed with the replica-naming id', async () => {
  const stream = await clients[1].responses.create({
    model,
    instructions,
    input: 'Stream me a short answer.',
    max_output_tokens: 6,
    stream: true,
  });
  const types = [];
  let text = '';
  let done = null;
  for await (const event of stream) {
    types.push(event.type);
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed') done = event.response;
  }
  assert.equal(types[0], 'response.created');
  assert.ok(types.includes('response.output_item.added'));
  assert.ok(types.filter((t) => t === 'response.output_text.delta').length >= 1);
  assert.equal(types.at(-1), 'response.completed');
  assert.match(done.id, /\.kvr\./);
  assert.ok(text.length > 0);
  const next = await clients[0].responses.create({ model, previous_response_id: done.id, input: 'More.', max_output_tokens: 4 });
  assert.ok(next.usage.input_tokens_details.cached_tokens > 0);
});

test('responses: a function call and its output', async () => {
  const tools = [
    {
      type: 'function',
      name: 'read_file',
      description: 'Read a file of the repository.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      strict: true,
    },
  ];
  const call = await clients[0].responses.create({ model, instructions, tools, input: 'Use read_file on the README.', max_output_tokens: 16 });
  const fc = call.output.find((o) => o.type === 'function_call');
  assert.ok(fc, JSON.stringify(call.output));
  assert.equal(fc.name, 'read_file');
  assert.deepEqual(JSON.parse(fc.arguments), { path: 'sim' });
  const answer = await clients[1].responses.create({
    model,
    tools,
    previous_response_id: call.id,
    input: [{ type: 'function_call_output', call_id: fc.call_id, output: '# kvrouter' }],
    max_output_tokens: 6,
  });
  assert.equal(answer.output[0].type, 'message');
  assert.ok(answer.usage.input_tokens_details.cached_tokens > 0);
});
