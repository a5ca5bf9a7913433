// The official MCP TypeScript SDK's client against `cottonbox mcp`: lists
// the tools, calls each on real recorded sessions, sends malformed
// requests, and pages through a huge result.  Run by mcp_clients.sh:
//   node sdk_client.mjs TOOLS_DIR COTTONBOX DB ARGS_JSON
// ARGS_JSON: {"session", "huge_session", "net_session", "huge_count", "denied_event", "policy_file", "protected"}
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const [toolsDir, cottonbox, db, argsJson] = process.argv.slice(2);
const args = JSON.parse(argsJson);
const require = createRequire(toolsDir + '/node_modules/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { CallToolResultSchema, LATEST_PROTOCOL_VERSION, McpError } = require('@modelcontextprotocol/sdk/types.js');

const transport = new StdioClientTransport({ command: cottonbox, args: ['mcp', '--db', db], stderr: 'inherit' });
const client = new Client({ name: 'cottonbox-test', version: '1.0.0' });
await client.connect(transport);

// The server speaks the SDK's latest revision.
assert.equal(client.getServerVersion().name, 'cottonbox');
console.log(`negotiated with ${client.getServerVersion().name}; SDK latest revision ${LATEST_PROTOCOL_VERSION}`);

const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, ['check_policy', 'list_sessions', 'process_tree', 'query_events', 'replay', 'session_summary',
  'who_contacted', 'who_touched', 'why']);
for (const t of tools) assert.equal(t.annotations?.readOnlyHint, true, `${t.name} is read-only`);

async function call(name, a) {
  const r = await client.callTool({ name, arguments: a });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r.content)}`);
  assert.equal(r.content[0].type, 'text');
  assert.ok(r.structuredContent, `${name} has structured content`);
  assert.deepEqual(JSON.parse(r.content[1].text), r.structuredContent, `${name}: the JSON text is the structured content`);
  return r.structuredContent;
}

const sessions = await call('list_sessions', {});
assert.ok(sessions.sessions.some((s) => s.id === args.session));

const summary = await call('session_summary', { session: args.session });
assert.equal(summary.session.id, args.session);
assert.ok(summary.denials.some((d) => d.id === args.denied_event), 'the denial is in the summary');

const denials = await call('query_events', { session: args.session, decision: 'deny' });
assert.ok(denials.events.some((e) => e.id === args.denied_event && e.rule === 'protect'));

const tree = await call('process_tree', { session: args.session });
assert.ok(tree.processes.some((p) => p.comm === 'rm' && p.identity?.[0] === 'rm'), 'rm is in the tree, as rm');

const touched = await call('who_touched', { path: args.protected });
assert.ok(touched.events.length > 0);
assert.ok(touched.events.every((e) => e.path.startsWith(args.protected) || e.target.startsWith(args.protected)));
assert.ok(touched.events.some((e) => e.chain[0] === 'rm' && e.identity?.[0] === 'rm' && e.decision === 'deny'),
  'with the chain of identities');

const contacted = await call('who_contacted', { host: '127.0.0.0/8', session: args.net_session });
assert.equal(contacted.events.length, 2);
assert.ok(contacted.events.every((e) => e.action === 'net.connect' && e.net.addr === '127.0.0.1' && e.chain.length >= 1),
  'connections to loopback, with the chain');
const nobody = await call('who_contacted', { host: '*.example.com' });
assert.equal(nobody.events.length, 0);

const why = await call('why', { event_id: args.denied_event });
assert.equal(why.explanation.rule.id, 'protect');
assert.match(why.explanation.rule.location, /:\d+:\d+$/);
assert.equal(why.reproduced, true);

const hypothetical = await call('why', {
  action: 'file.delete', path: args.protected + '/x', process: 'rm', policy_files: [args.policy_file] });
assert.equal(hypothetical.explanation.verdict, 'deny');

const replay = await call('replay', { sessions: [args.session], policy_text: 'version: 1\ndefault: allow\n' });
assert.ok(replay.changes.some((c) => c.id === args.denied_event && c.before === 'deny' && c.after === 'allow'));

const good = await call('check_policy', { policy_files: [args.policy_file] });
assert.equal(good.ok, true);
const bad = await call('check_policy', { policy_text: 'version: 1\nrules:\n  - id: x\n    action: file.dleete\n' });
assert.equal(bad.ok, false);
const typo = bad.errors.find((e) => /unknown action 'file\.dleete'/.test(e.message));
assert.ok(typo, JSON.stringify(bad.errors));
assert.equal(typo.line, 4);
assert.match(typo.message, /did you mean 'file\.delete'/);

// A tool failing on good JSON: an error result the model can read.
const missing = await client.callTool({ name: 'session_summary', arguments: { session: 999999 } });
assert.equal(missing.isError, true);
assert.match(missing.content[0].text, /no session 999999/);

// Malformed requests: JSON-RPC errors through the real client.
await assert.rejects(client.request({ method: 'tools/call', params: { name: 42 } }, CallToolResultSchema),
  (e) => e instanceof McpError && e.code === -32602);
await assert.rejects(client.request({ method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
  CallToolResultSchema), (e) => e instanceof McpError && e.code === -32602 && /unknown tool/.test(e.message));
await assert.rejects(client.request({ method: 'no/such/method', params: {} }, CallToolResultSchema),
  (e) => e instanceof McpError && e.code === -32601);

// A huge result, paged: every event once, in order.
const ids = [];
let cursor;
let pages = 0;
do {
  const page = await call('query_events', { session: args.huge_session, limit: 250, ...(cursor ? { cursor } : {}) });
  for (const e of page.events) ids.push(e.id);
  cursor = page.next_cursor;
  ++pages;
  assert.ok(pages < 1000);
} while (cursor);
assert.equal(ids.length, args.huge_count, 'every event of the session');
for (let i = 1; i < ids.length; ++i) assert.ok(ids[i] > ids[i - 1], 'in order, none twice');
const bogus = await client.callTool({ name: 'query_events', arguments: { cursor: 'not-a-cursor' } });
assert.equal(bogus.isError, true);

await client.close();
console.log(`sdk client: ok (9 tools called, ${ids.length} events in ${pages} pages)`);
