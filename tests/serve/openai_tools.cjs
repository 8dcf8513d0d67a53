// Tool calls through the official OpenAI JavaScript client, on a model that never learned tools:
// tool_choice required and a named function (the grammar makes the output a call), streamed
// and not, n > 1, the client's own stream accumulator; auto parsing a Hermes <tool_call> the
// output was held to by a GBNF grammar, with the text before it as content and no markup leaking
// into the stream, tool_choice none leaving it content; bad tool fields as the client's
// typed 400 naming the field. Arguments are parsed and checked against each tool's schema here.
// Usage: node openai_tools.cjs NODE_MODULES URL API_KEY
const path = require('path');
const OpenAI = require(path.join(process.argv[2], 'openai'));
const [url, key] = [process.argv[3], process.argv[4]];
const client = new OpenAI({ baseURL: url + '/v1', apiKey: key, maxRetries: 0, timeout: 60000 });

let fails = 0;
function check(what, cond, detail) {
  if (cond) console.log('ok: ' + what);
  else { console.log('FAIL: ' + what + (detail !== undefined ? ' -> ' + JSON.stringify(detail) : '')); fails++; }
}
async function error(promise) {
  try { await promise; return null; } catch (e) { return e instanceof OpenAI.APIError ? e : { status: String(e) }; }
}
function parse(text) { try { return JSON.parse(text); } catch (e) { return undefined; } }

const tools = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 },
      days: { type: 'integer', minimum: 1, maximum: 7 }, unit: { enum: ['C', 'F'] } },
    required: ['city', 'days'], additionalProperties: false } } },
  { type: 'function', function: { name: 'get_time', description: 'The time now' } },
];
// Each tool's schema, checked here (not by the grammar that produced the call).
function valid_arguments(name, text) {
  const a = parse(text);
  if (a === null || typeof a !== 'object' || Array.isArray(a)) return false;
  if (name === 'get_time') return Object.keys(a).length === 0; // no parameters: {}
  if (name !== 'get_weather') return false;
  const keys = Object.keys(a);
  return keys.every((k) => ['city', 'days', 'unit'].includes(k)) && typeof a.city === 'string' && [...a.city].length <= 12 &&
    Number.isInteger(a.days) && a.days >= 1 && a.days <= 7 && (a.unit === undefined || a.unit === 'C' || a.unit === 'F');
}
function valid_call(c, only) {
  return c.type === 'function' && /^call_[A-Za-z0-9]{24}$/.test(c.id) && (only ? c.function.name === only : true) &&
    valid_arguments(c.function.name, c.function.arguments);
}
const user = [{ role: 'user', content: 'What is the weather in Ur?' }];
const weather = { type: 'function', function: { name: 'get_weather' } };

(async () => {
  const r = await client.chat.completions.create({ model: 'default', messages: user, tools, tool_choice: 'required',
    parallel_tool_calls: false, n: 3, seed: 4, max_tokens: 100 });
  check('required, n=3: every choice one valid call, content null, finish_reason tool_calls', r.choices.length === 3 &&
        r.choices.every((c) => c.finish_reason === 'tool_calls' && c.message.content === null &&
                                c.message.tool_calls.length === 1 && valid_call(c.message.tool_calls[0])), r.choices);
  const ids = r.choices.map((c) => c.message.tool_calls[0].id);
  check('call ids are unique', new Set(ids).size === ids.length, ids);

  const named = await client.chat.completions.create({ model: 'default', messages: user, tools, tool_choice: weather,
    parallel_tool_calls: false, seed: 2, max_tokens: 120 });
  const nc = named.choices[0];
  check('named function: a valid get_weather call', nc.finish_reason === 'tool_calls' && nc.message.tool_calls.length === 1 &&
        valid_call(nc.message.tool_calls[0], 'get_weather'), nc);

  // Streamed: the deltas joined by hand (id and name once, arguments in pieces).
  const s = await client.chat.completions.create({ model: 'default', messages: user, tools, tool_choice: weather,
    parallel_tool_calls: false, seed: 7, max_tokens: 120, stream: true });
  const calls = [];
  let content = '', finish = null;
  for await (const chunk of s) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    content += ch.delta.content || '';
    for (const d of ch.delta.tool_calls || []) {
      const c = (calls[d.index] ||= { id: '', type: '', function: { name: '', arguments: '' } });
      if (d.id) c.id = d.id;
      if (d.type) c.type = d.type;
      if (d.function?.name) c.function.name += d.function.name;
      c.function.arguments += d.function?.arguments || '';
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  check('streamed named function: one valid call from the deltas, no content, finish_reason tool_calls',
        finish === 'tool_calls' && content === '' && calls.length === 1 && valid_call(calls[0], 'get_weather'), { calls, content, finish });

  // The client's own accumulator of a stream.
  const acc = await client.beta.chat.completions.stream({ model: 'default', messages: user, tools, tool_choice: 'required',
    parallel_tool_calls: false, seed: 11, max_tokens: 120 }).finalChatCompletion();
  const ac = acc.choices[0];
  check('client stream helper: its final completion has the valid call', ac.finish_reason === 'tool_calls' &&
        ac.message.tool_calls.length === 1 && valid_call(ac.message.tool_calls[0]), ac);

  // auto: the output a Hermes template's model writes (held to it by a grammar), text then calls.
  const hermes = 'root ::= "Let me see.\\n<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"Ur\\", \\"days\\": 2}}\\n</tool_call>\\n' +
    '<tool_call>\\n{\\"name\\": \\"get_time\\", \\"arguments\\": {}}\\n</tool_call>"';
  const a = await client.chat.completions.create({ model: 'default', messages: user, tools, max_tokens: 150, grammar: hermes });
  const am = a.choices[0].message;
  check('auto: Hermes calls parsed, the text before them is content', a.choices[0].finish_reason === 'tool_calls' &&
        am.content === 'Let me see.' && am.tool_calls.length === 2 && am.tool_calls[0].function.name === 'get_weather' &&
        parse(am.tool_calls[0].function.arguments)?.city === 'Ur' && valid_call(am.tool_calls[1], 'get_time'), am);
  const one = await client.chat.completions.create({ model: 'default', messages: user, tools, max_tokens: 150, grammar: hermes,
    parallel_tool_calls: false });
  check('auto with parallel_tool_calls false: the first call only', one.choices[0].message.tool_calls?.length === 1 &&
        one.choices[0].message.tool_calls[0].function.name === 'get_weather', one.choices[0].message);
  let streamed = '';
  const sa = await client.chat.completions.create({ model: 'default', messages: user, tools, max_tokens: 150, grammar: hermes, stream: true });
  const names = [];
  let sfinish = null;
  for await (const chunk of sa) {
    const ch = chunk.choices[0];
    if (!ch) continue;
    streamed += ch.delta.content || '';
    for (const d of ch.delta.tool_calls || []) if (d.function?.name) names[d.index] = d.function.name;
    if (ch.finish_reason) sfinish = ch.finish_reason;
  }
  check('auto streamed: the text streams as content, no <tool_call> markup leaks, two call deltas',
        streamed.trim() === 'Let me see.' && !streamed.includes('<') && names.join() === 'get_weather,get_time' && sfinish === 'tool_calls',
        { streamed, names, sfinish });
  const none = await client.chat.completions.create({ model: 'default', messages: user, tools, tool_choice: 'none',
    max_tokens: 150, grammar: hermes });
  check('tool_choice none: the same output stays content', none.choices[0].finish_reason === 'stop' &&
        none.choices[0].message.tool_calls === undefined && none.choices[0].message.content.includes('<tool_call>'), none.choices[0]);

  // Bad input: the client's typed 400 naming the field.
  const bad = async (what, body, param) => {
    const e = await error(client.chat.completions.create({ model: 'default', messages: user, max_tokens: 5, ...body }));
    check(what + ' -> 400 naming ' + param, e && e.status === 400 && e.param === param, e && [e.status, e.param, e.message]);
  };
  await bad('unknown tool_choice', { tools, tool_choice: 'sometimes' }, 'tool_choice');
  await bad('a named function not in tools', { tools, tool_choice: { type: 'function', function: { name: 'get_date' } } },
            'tool_choice.function.name');
  await bad('tool_choice without tools', { tool_choice: 'required' }, 'tool_choice');
  await bad('a tool without a name', { tools: [{ type: 'function', function: { description: 'x' } }] }, 'tools[0].function.name');
  await bad('parallel_tool_calls not a boolean', { tools, parallel_tool_calls: 'yes' }, 'parallel_tool_calls');
  await bad('required with parameters the grammar cannot express',
            { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string', pattern: 'x' } } } } }],
              tool_choice: 'required' }, 'tools[0].function.parameters');
  process.exit(fails ? 1 : 0);
})().catch((e) => { console.log('FAIL: ' + (e.stack || e)); process.exit(1); });
