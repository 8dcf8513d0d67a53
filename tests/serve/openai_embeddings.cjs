// The official OpenAI JavaScript client's embeddings.create against rocmforge serve: unit
// vectors of the model's width (the client asks for base64 unless told, and decodes it), the
// same floats with encoding_format float, a list of inputs, usage, and a bad `dimensions` as
// the client's 400. Usage: node openai_embeddings.cjs NODE_MODULES URL API_KEY
const path = require('path');
const OpenAI = require(path.join(process.argv[2], 'openai'));
const [url, key] = [process.argv[3], process.argv[4]];
const client = new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0, timeout: 20000 });

let fails = 0;
function check(what, cond, detail) {
  if (cond) console.log('ok: ' + what);
  else { console.log('FAIL: ' + what + (detail !== undefined ? ' -> ' + JSON.stringify(detail).slice(0, 300) : '')); fails++; }
}
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

(async () => {
  const text = 'In the beginning God created the heaven and the earth.';
  const r = await client.embeddings.create({ model: 'default', input: text });
  const v = r.data[0].embedding;
  check('embeddings.create: one unit vector of 256 floats', r.object === 'list' && r.data.length === 1 &&
        Array.isArray(v) && v.length === 256 && Math.abs(norm(v) - 1) < 1e-5, r);
  check('usage: prompt_tokens = total_tokens > 0', r.usage.prompt_tokens > 0 && r.usage.prompt_tokens === r.usage.total_tokens, r.usage);
  const f = await client.embeddings.create({ model: 'default', input: text, encoding_format: 'float' });
  const vf = f.data[0].embedding;
  // float: 9 significant digits, read back as the same float32 as the base64 bytes.
  check('float = base64 (as float32)', vf.length === 256 && vf.every((x, i) => Math.fround(x) === Math.fround(v[i])));
  const many = await client.embeddings.create({ model: 'default', input: [text, 'And God said', text] });
  const d = many.data;
  check('a list of 3 inputs: indexes 0..2, the first = the single request',
        d.length === 3 && d.map((e) => e.index).join() === '0,1,2' && d[0].embedding.every((x, i) => x === v[i]));
  check('the same text twice: the same vector', d[2].embedding.every((x, i) => x === d[0].embedding[i]));
  try {
    await client.embeddings.create({ model: 'default', input: text, dimensions: 64 });
    check('dimensions 64 refused', false);
  } catch (e) {
    check('dimensions 64: a 400 BadRequestError naming dimensions', e instanceof OpenAI.BadRequestError && e.param === 'dimensions',
          String(e));
  }
  console.log(fails ? fails + ' check(s) failed' : 'all embedding checks passed');
  process.exit(fails ? 1 : 0);
})().catch((e) => { console.log('FAIL: ' + e); process.exit(1); });
