// Structured output through the official OpenAI JavaScript client: response_format json_schema
// (strict) and json_object, streamed and not, n > 1; logit_bias; a schema the server cannot
// express and a bad logit_bias as the client's typed 400 naming the field.
// Usage: node openai_structured.cjs NODE_MODULES URL API_KEY
const path = require('path');
const OpenAI = require(path.join(process.argv[2], 'openai'));
const [url, key] = [process.argv[3], process.argv[4]];
const client = new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0, timeout: 30000 });

let fails = 0;
function check(what, cond, detail) {
  if (cond) console.log('ok: ' + what);
  else { console.log('FAIL: ' + what + (detail !== undefined ? ' -> ' + JSON.stringify(detail) : '')); fails++; }
}
async function error(promise) {
  try { await promise; return null; } catch (e) { return e instanceof OpenAI.APIError ? e : { status: String(e) }; }
}
function parse(text) { try { return JSON.parse(text); } catch (e) { return undefined; } }

const schema = {
  type: 'object',
  properties: {
    verse: { type: 'string', maxLength: 12 },
    chapter: { type: 'integer' },
    book: { enum: ['Genesis', 'Exodus'] },
    kept: { type: 'boolean' },
  },
  required: ['verse', 'chapter', 'book', 'kept'],
  additionalProperties: false,
};
// The schema's rules, checked here (not by the grammar that produced the output).
function follows(v) {
  return v !== undefined && v !== null && typeof v === 'object' && !Array.isArray(v) &&
    Object.keys(v).sort().join() === 'book,chapter,kept,verse' && typeof v.verse === 'string' && [...v.verse].length <= 12 &&
    Number.isInteger(v.chapter) && (v.book === 'Genesis' || v.book === 'Exodus') && typeof v.kept === 'boolean';
}
const format = { type: 'json_schema', json_schema: { name: 'verse', strict: true, schema } };

(async () => {
  const r = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'A verse?' }],
    n: 3, seed: 5, max_tokens: 400, response_format: format });
  check('json_schema: 3 choices parse and follow the schema', r.choices.length === 3 &&
        r.choices.every((c) => c.finish_reason === 'stop' && follows(parse(c.message.content))), r.choices);

  let content = '';
  const s = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'A verse?' }],
    seed: 8, max_tokens: 400, response_format: format, stream: true });
  for await (const chunk of s) content += chunk.choices[0]?.delta?.content || '';
  check('json_schema streamed: the joined deltas follow the schema', follows(parse(content)), content);

  const o = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'JSON?' }],
    n: 2, seed: 1, max_tokens: 450, response_format: { type: 'json_object' } });
  check('json_object: each finished choice is a JSON object', o.choices.every((c) => c.finish_reason === 'length' ||
        (typeof parse(c.message.content) === 'object' && !Array.isArray(parse(c.message.content)))), o.choices);

  // logit_bias: +100 on one token makes every greedy pick that token.
  const ids = await (await fetch(url + '/tokenize', { method: 'POST', headers: { Authorization: 'Bearer ' + key },
    body: JSON.stringify({ content: 'In the', with_pieces: true }) })).json();
  const the = ids.tokens[1];
  const forced = await client.completions.create({ model: 'default', prompt: 'In the beginning', max_tokens: 3,
    temperature: 0, logit_bias: { [the.id]: 100 } });
  check('logit_bias +100: the token every time', forced.choices[0].text === the.piece.repeat(3), [forced.choices[0].text, the]);

  const bad = await error(client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'x' }],
    response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'string', format: 'email' } } } }));
  check('unsupported schema keyword -> 400 naming it', bad && bad.status === 400 && bad.param === 'response_format.json_schema.schema' &&
        /format 'email'/.test(bad.message), bad && [bad.status, bad.param, bad.message]);
  const lb = await error(client.completions.create({ model: 'default', prompt: 'x', logit_bias: { 5: 300 } }));
  check('logit_bias out of range -> 400 naming it', lb && lb.status === 400 && lb.param === 'logit_bias', lb && [lb.status, lb.param]);
  process.exit(fails ? 1 : 0);
})().catch((e) => { console.log('FAIL: ' + (e.stack || e)); process.exit(1); });
