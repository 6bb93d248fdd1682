// The official OpenAI and Anthropic client libraries against a running kvrouter ingress.
// KVROUTER_URL (default http://127.0.0.1:8080) and KVROUTER_MODEL (default kvrouter-demo).
// Run by load-tests' SdkClientsIT against an in-process demo cluster, or by hand:
//   ./kvrouter demo &   cd clients && npm ci && npm test
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const base = process.env.KVROUTER_URL ?? 'http://127.0.0.1:8080';
const model = process.env.KVROUTER_MODEL ?? 'kvrouter-demo';
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
const anthropic = new Anthropic({ baseURL: base, apiKey: 'unused', maxRetries: 0 });

test('openai: chat completion', async () => {
  const r = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 8,
  });
  assert.equal(r.object, 'chat.completion');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.equal(r.usage.completion_tokens, 8);
  assert.ok(r.usage.prompt_tokens > 0);
});

test('openai: streaming chat completion', async () => {
  const stream = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Count to three.' }],
    max_tokens: 6,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let chunks = 0;
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(chunks >= 6, `got ${chunks} chunks`);
  assert.ok(text.length > 0);
  assert.equal(usage.completion_tokens, 6);
});

test('openai: completion', async () => {
  const r = await openai.completions.create({ model, prompt: 'Once upon a time', max_tokens: 5 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.usage.completion_tokens, 5);
});

test('openai: models list the served model', async () => {
  const models = await openai.models.list();
  assert.ok(models.data.some((m) => m.id === model));
});

test('openai: bad input surfaces as an APIError with status', async () => {
  await assert.rejects(
    openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    (e) => e instanceof OpenAI.APIError && e.status === 404,
  );
});

test('anthropic: message', async () => {
  const m = await anthropic.messages.create({
    model,
    max_tokens: 8,
    system: 'Be brief.',
    messages: [{ role: 'user', content: 'Say hello.' }],
  });
  assert.equal(m.type, 'message');
  assert.equal(m.role, 'assistant');
  assert.equal(m.content[0].type, 'text');
  assert.equal(m.stop_reason, 'max_tokens');
  assert.equal(m.usage.output_tokens, 8);
});

test('anthropic: streaming message', async () => {
  const stream = anthropic.messages.stream({
    model,
    max_tokens: 6,
    messages: [{ role: 'user', content: 'Count to three.' }],
  });
  let deltas = 0;
  stream.on('text', () => deltas++);
  const final = await stream.finalMessage();
  assert.ok(deltas >= 1, `got ${deltas} text deltas`);
  assert.equal(final.content[0].type, 'text');
  assert.ok(final.content[0].text.length > 0);
  assert.equal(final.usage.output_tokens, 6);
});
