// openai_client_test.mjs drives cmd/serve with the official openai npm
// client (run by scripts/openai_client_test.sh, which starts the server):
// models, completions and chat, whole and streamed; greedy answers equal
// to `train sample --temperature=0`'s; 32 concurrent sampled requests each
// equal to the same request alone; the errors of bad requests.
//
// Usage: node openai_client_test.mjs OPENAI_DIR BASE_URL API_KEY EXPECTED.json
// where OPENAI_DIR holds node_modules/openai and EXPECTED.json maps each
// prompt to train sample's greedy text (prompt included).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';

const [openaiDir, baseURL, apiKey, expectedFile] = process.argv.slice(2);
const require = createRequire(openaiDir + '/');
const OpenAI = require('openai');
const expected = JSON.parse(readFileSync(expectedFile, 'utf8'));
const model = 'tiny';
const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey, maxRetries: 0, timeout: 60_000 });

let checks = 0;
async function check(name, f) {
  try {
    await f();
    checks++;
  } catch (e) {
    console.error(`FAIL ${name}: ${e.stack || e}`);
    process.exitCode = 1;
  }
}

async function streamedText(params) {
  const stream = await client.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, finish, usage };
}

async function chatStreamed(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  let text = '';
  let role = null;
  let finish = null;
  let first = true;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    if (first) {
      assert.equal(c.delta.role, 'assistant', 'the first delta carries the role');
      first = false;
    }
    if (c.delta.role) role = c.delta.role;
    if (c.delta.content) text += c.delta.content;
    if (c.finish_reason) finish = c.finish_reason;
  }
  return { text, role, finish };
}

await check('models', async () => {
  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  assert.deepEqual(ids, [model]);
  const m = await client.models.retrieve(model);
  assert.equal(m.id, model);
  assert.equal(m.object, 'model');
});

for (const [prompt, want] of Object.entries(expected)) {
  await check(`greedy completion of ${JSON.stringify(prompt)}`, async () => {
    const r = await client.completions.create({ model, prompt, max_tokens: 40, temperature: 0 });
    assert.equal(r.object, 'text_completion');
    assert.equal(prompt + r.choices[0].text, want, 'the library\'s greedy generation');
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.deepEqual(r.usage, { prompt_tokens: prompt.length, completion_tokens: 40, total_tokens: prompt.length + 40 });
    const s = await streamedText({ model, prompt, max_tokens: 40, temperature: 0 });
    assert.equal(s.text, r.choices[0].text, 'streamed equals whole');
    assert.equal(s.finish, 'length');
    assert.deepEqual(s.usage, r.usage);
  });
}

await check('chat, whole and streamed', async () => {
  const messages = [{ role: 'user', content: 'hi' }];
  const r = await client.chat.completions.create({ model, messages, max_tokens: 30, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  // the chat template renders "user: hi\nassistant:"
  const want = expected['user: hi\nassistant:'].slice('user: hi\nassistant:'.length, 'user: hi\nassistant:'.length + 30);
  assert.equal(r.choices[0].message.content, want, 'the template\'s prompt, continued greedily');
  assert.equal(r.usage.prompt_tokens, 'user: hi\nassistant:'.length);
  const s = await chatStreamed({ model, messages, max_tokens: 30, temperature: 0 });
  assert.equal(s.text, want);
  assert.equal(s.role, 'assistant');
  assert.equal(s.finish, 'length');
});

await check('stop strings', async () => {
  const prompt = Object.keys(expected)[0];
  const full = expected[prompt].slice(prompt.length);
  const stop = full.slice(12, 15);
  const cut = full.slice(0, full.indexOf(stop));
  const r = await client.completions.create({ model, prompt, max_tokens: 40, temperature: 0, stop: [stop] });
  assert.equal(r.choices[0].text, cut);
  assert.equal(r.choices[0].finish_reason, 'stop');
  const s = await streamedText({ model, prompt, max_tokens: 40, temperature: 0, stop });
  assert.equal(s.text, cut);
  assert.equal(s.finish, 'stop');
});

await check('continuous usage: a chunk per token, each with its usage', async () => {
  const prompt = Object.keys(expected)[0];
  const stream = await client.completions.create({
    model, prompt, max_tokens: 20, temperature: 0, stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  });
  let text = '';
  let last = 0;
  let tokens = 0;
  for await (const chunk of stream) {
    assert.ok(chunk.usage, 'every chunk carries the usage');
    if (chunk.choices.length === 0) {
      assert.equal(chunk.usage.completion_tokens, 20);
      continue;
    }
    const c = chunk.choices[0];
    text += c.text;
    if (!c.finish_reason) {
      assert.equal(chunk.usage.completion_tokens, last + 1, 'one token per chunk');
      tokens++;
    }
    last = chunk.usage.completion_tokens;
  }
  assert.equal(tokens, 20);
  assert.equal(prompt + text, expected[prompt].slice(0, (prompt + text).length));
});

await check('32 concurrent sampled requests equal each alone', async () => {
  const prompts = Object.keys(expected);
  const reqs = Array.from({ length: 32 }, (_, i) => ({
    model,
    prompt: prompts[i % prompts.length],
    max_tokens: 10 + (i % 4) * 8,
    temperature: 0.6 + (i % 3) * 0.3,
    top_p: [1, 0.9, 0.7][i % 3],
    top_k: i % 5 * 4, // Wick's extension, passed through by the client
    seed: 1000 + i,
  }));
  const together = await Promise.all(reqs.map((r, i) => (i % 2 ? streamedText(r).then((s) => s.text) : client.completions.create(r).then((c) => c.choices[0].text))));
  const distinct = new Set();
  for (const [i, r] of reqs.entries()) {
    const alone = (await client.completions.create(r)).choices[0].text;
    assert.equal(together[i], alone, `request ${i} with 31 others and alone`);
    distinct.add(alone);
  }
  assert.ok(distinct.size >= 24, `only ${distinct.size} distinct answers to 32 seeds`);
});

await check('n choices', async () => {
  const r = await client.completions.create({ model, prompt: 'ab', max_tokens: 12, temperature: 1, seed: 5, n: 3 });
  assert.equal(r.choices.length, 3);
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1, 2]);
  assert.equal(new Set(r.choices.map((c) => c.text)).size, 3, 'each choice draws its own numbers');
});

async function expectError(name, status, f, want) {
  await check(name, async () => {
    try {
      await f();
    } catch (e) {
      assert.ok(e instanceof OpenAI.APIError, `an APIError, not ${e}`);
      assert.equal(e.status, status, e.message);
      if (want.type) assert.ok(e instanceof want.type, `${e.constructor.name}`);
      if (want.param) assert.equal(e.param, want.param);
      if (want.message) assert.match(e.message, want.message);
      return;
    }
    assert.fail('no error');
  });
}

await expectError('temperature 1e-300', 400, () => client.completions.create({ model, prompt: 'a', temperature: 1e-300 }),
  { type: OpenAI.BadRequestError, param: 'temperature', message: /use 0 for greedy/ });
await expectError('max_tokens past the cap', 400, () => client.completions.create({ model, prompt: 'a', max_tokens: 100000 }),
  { type: OpenAI.BadRequestError, param: 'max_tokens' });
await expectError('prompt past the context', 400, () => client.completions.create({ model, prompt: 'a'.repeat(200) }),
  { type: OpenAI.BadRequestError, message: /context of 128/ });
await expectError('a character outside the vocabulary', 400, () => client.completions.create({ model, prompt: 'héllo' }),
  { type: OpenAI.BadRequestError, param: 'prompt' });
await expectError('unknown model', 404, () => client.completions.create({ model: 'gpt-4', prompt: 'a' }),
  { type: OpenAI.NotFoundError, param: 'model' });
await expectError('logprobs', 400, () => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'a' }], logprobs: true }),
  { type: OpenAI.BadRequestError, param: 'logprobs' });
await expectError('a stream with a bad field', 400, () => client.chat.completions.create({ model, messages: [], stream: true }),
  { type: OpenAI.BadRequestError, param: 'messages' });
await expectError('wrong API key', 401, () => new OpenAI({ baseURL: baseURL + '/v1', apiKey: 'sk-wrong', maxRetries: 0 }).models.list(),
  { type: OpenAI.AuthenticationError });

await check('the server still answers', async () => {
  const prompt = Object.keys(expected)[0];
  const r = await client.completions.create({ model, prompt, max_tokens: 40, temperature: 0 });
  assert.equal(prompt + r.choices[0].text, expected[prompt]);
});

const { VERSION } = require('openai/version');
console.log(`openai ${VERSION}: ${checks} checks passed${process.exitCode ? ', some failed' : ''}`);
