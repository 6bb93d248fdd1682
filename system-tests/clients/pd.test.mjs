// The official OpenAI client against a disaggregated kvrouter demo (`kvrouter demo --prefill 2
// --decode 2`): long prompts go to a prefill engine first, then stream from a decode engine that
// carries the prefill's kv_transfer_params; short ones are decoded (and prefilled) in one place.
// KVROUTER_URL: an ingress; the engines are found in its /admin/replicas (role, url).
// Run by load-tests' SdkClientsIT, or by hand against a running demo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const base = process.env.KVROUTER_URL ?? 'http://127.0.0.1:8080';
const model = process.env.KVROUTER_MODEL ?? 'kvrouter-demo';
const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });

async function engines(role) {
  const replicas = await (await fetch(`${base}/admin/replicas`)).json();
  return [...new Set(replicas.filter((r) => r.role === role).map((r) => r.url))];
}

// Requests each engine of `role` logged with the given kv_transfer part.
async function logged(role, part) {
  let n = 0;
  for (const url of await engines(role)) {
    const log = await (await fetch(`${url}/sim/requests`)).json();
    n += log.requests.filter((r) => r.kv_transfer === part).length;
  }
  return n;
}

function words(seed, count) {
  const vocab = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const out = [];
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(vocab[x % vocab.length] + (x % 97));
  }
  return out.join(' ');
}

test('a long chat streams from a decode engine after its prefill ran on a prefill engine', async () => {
  const prefillsBefore = await logged('prefill', 'prefill');
  const decodesBefore = await logged('decode', 'decode');
  const stream = await openai.chat.completions.create({
    model,
    messages: [
      { role: 'system', content: words(7, 700) },
      { role: 'user', content: 'Summarise the above.' },
    ],
    max_tokens: 12,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? '';
    if (chunk.usage) usage = chunk.usage;
  }
  assert.ok(text.length > 0, 'streamed some text');
  assert.equal(usage.completion_tokens, 12, 'the decode engine generated all of it');
  assert.ok(usage.prompt_tokens > 512, `a long prompt: ${usage.prompt_tokens} tokens`);
  assert.equal(await logged('prefill', 'prefill'), prefillsBefore + 1, 'one prefill hop');
  assert.equal(await logged('decode', 'decode'), decodesBefore + 1, 'one decode with the handshake');
});

test('a short chat skips the prefill hop', async () => {
  const prefillsBefore = await logged('prefill', 'prefill');
  const plainBefore = await logged('decode', 'none');
  const r = await openai.chat.completions.create({
    model,
    messages: [{ role: 'user', content: 'Say hello.' }],
    max_tokens: 4,
  });
  assert.equal(r.usage.completion_tokens, 4);
  assert.equal(await logged('prefill', 'prefill'), prefillsBefore, 'no prefill hop');
  assert.equal(await logged('decode', 'none'), plainBefore + 1, 'prefilled where it decoded');
});
