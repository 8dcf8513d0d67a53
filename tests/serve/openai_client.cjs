// The official OpenAI JavaScript client against rocmforge serve: chat and completion, streaming
// and not, stop strings, usage, n and prompt arrays, logprobs, echo, errors as the client's typed
// exceptions, the API key, and a stream aborted by the client. Usage: node openai_client.cjs NODE_MODULES URL API_KEY
const path = require('path');
const OpenAI = require(path.join(process.argv[2], 'openai'));
const [url, key] = [process.argv[3], process.argv[4]];
const client = new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0, timeout: 20000 });

let fails = 0;
function check(what, cond, detail) {
  if (cond) console.log('ok: ' + what);
  else { console.log('FAIL: ' + what + (detail !== undefined ? ' -> ' + JSON.stringify(detail) : '')); fails++; }
}
async function status(promise) {
  try { await promise; return 200; } catch (e) { return e instanceof OpenAI.APIError ? e.status : String(e); }
}

(async () => {
  const models = await client.models.list();
  check('models.list', models.data.length === 1 && models.data[0].id === 'default', models.data);

  const chat = await client.chat.completions.create({
    model: 'default', messages: [{ role: 'user', content: 'Who made the heaven?' }], max_tokens: 8, temperature: 0 });
  const c0 = chat.choices[0];
  check('chat: message and usage', c0.message.role === 'assistant' && typeof c0.message.content === 'string' &&
        chat.usage.completion_tokens <= 8 && chat.usage.total_tokens === chat.usage.prompt_tokens + chat.usage.completion_tokens, chat);

  const comp = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12, temperature: 0 });
  const text = comp.choices[0].text;
  check('completion: 12 tokens, length', comp.usage.completion_tokens === 12 && comp.choices[0].finish_reason === 'length', comp);

  let streamed = '', last = null, usage = null;
  const stream = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12,
    temperature: 0, stream: true, stream_options: { include_usage: true } });
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length) { streamed += chunk.choices[0].text; last = chunk.choices[0].finish_reason || last; }
  }
  check('completion stream = non-stream text', streamed === text, [streamed, text]);
  check('completion stream: finish_reason and usage', last === 'length' && usage && usage.completion_tokens === 12, usage);

  let content = '', role = null, reason = null;
  const cs = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'Hi' }],
    max_tokens: 6, stream: true, seed: 3 });
  for await (const chunk of cs) {
    const d = chunk.choices[0];
    role = role || d.delta.role; content += d.delta.content || ''; reason = d.finish_reason || reason;
  }
  check('chat stream: role, content, finish_reason', role === 'assistant' && content.length > 0 && reason !== null, [role, content, reason]);

  const word = text.trim().split(' ')[2];
  const stopped = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12,
    temperature: 0, stop: [word] });
  check('stop string', stopped.choices[0].finish_reason === 'stop' && stopped.choices[0].text === text.split(word)[0], stopped.choices[0]);

  // n, prompt arrays, logprobs and echo as the client types them.
  const multi = await client.completions.create({ model: 'default', prompt: ['In the beginning', 'And God said'], n: 2,
    max_tokens: 4, temperature: 0.9, seed: 11 });
  check('completions: 2 prompts x n=2 -> choices 0..3', multi.choices.map((c) => c.index).join() === '0,1,2,3', multi.choices);
  const one = await client.completions.create({ model: 'default', prompt: 'And God said', max_tokens: 4, temperature: 0.9, seed: 13 });
  check('completions: choice 2 = prompt 1 with seed 11 + 2', multi.choices[2].text === one.choices[0].text, [multi.choices[2], one.choices[0]]);
  const lp = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12, temperature: 0,
    logprobs: 2, echo: false });
  const l = lp.choices[0].logprobs;
  check('completions logprobs: tokens, token_logprobs, top_logprobs, text_offset', l.tokens.join('') === text &&
        l.token_logprobs.length === 12 && l.top_logprobs.every((t) => Object.keys(t).length >= 2) && l.text_offset[0] === 0, l);
  const echoed = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12, temperature: 0, echo: true });
  check('completions echo', echoed.choices[0].text === 'In the beginning' + text, echoed.choices[0]);
  const clp = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'Hi' }],
    max_tokens: 4, n: 2, logprobs: true, top_logprobs: 3 });
  check('chat n=2 with logprobs', clp.choices.length === 2 && clp.choices.every((c) =>
    c.logprobs.content.length >= 1 && c.logprobs.content.every((t) => t.top_logprobs.length === 3 && Array.isArray(t.bytes)) &&
    c.logprobs.content.map((t) => t.token).join('') === c.message.content), clp.choices);
  let chunkIdx = new Set();
  const ns = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'Hi' }],
    max_tokens: 3, n: 2, stream: true });
  for await (const chunk of ns) for (const c of chunk.choices) if (c.finish_reason) chunkIdx.add(c.index);
  check('chat stream n=2: both choices finish', chunkIdx.size === 2, [...chunkIdx]);
  check('n=0 -> 400', await status(client.completions.create({ model: 'default', prompt: 'x', n: 0 })) === 400);
  check('logprobs 6 -> 400', await status(client.completions.create({ model: 'default', prompt: 'x', logprobs: 6 })) === 400);
  const el = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 12, temperature: 0,
    echo: true, logprobs: 1 });
  const e0 = el.choices[0];
  check('echo + logprobs: prompt tokens first, the first null', e0.text === 'In the beginning' + text &&
        e0.logprobs.token_logprobs[0] === null && e0.logprobs.tokens.length === el.usage.prompt_tokens + 12 &&
        e0.logprobs.tokens.slice(el.usage.prompt_tokens).join('') === text, e0.logprobs);
  check('huge max_tokens -> 400', await status(client.completions.create({ model: 'default', prompt: 'x', max_tokens: 1e9 })) === 400);
  check('temperature 3 -> 400', await status(client.chat.completions.create({ model: 'default',
    messages: [{ role: 'user', content: 'x' }], temperature: 3 })) === 400);
  const wrong = new OpenAI({ baseURL: url + '/v1', apiKey: key + 'x', maxRetries: 0 });
  check('wrong API key -> 401', await status(wrong.models.list()) === 401);

  // Abort a stream after its first chunk: the server cancels it (its pages return to the pool).
  const ac = new AbortController();
  const long = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 480,
    temperature: 0, stream: true }, { signal: ac.signal });
  let got = 0;
  try { for await (const _ of long) { if (++got === 1) ac.abort(); } } catch (e) { /* the abort */ }
  check('stream aborted by the client', got >= 1);
  process.exit(fails ? 1 : 0);
})().catch((e) => { console.log('FAIL: ' + (e.stack || e)); process.exit(1); });
