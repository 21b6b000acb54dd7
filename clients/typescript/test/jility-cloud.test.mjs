// jility's scenario at the remote MCP endpoint of `jility serve` (Streamable HTTP at /mcp,
// `Authorization: Bearer` with the workspace's full_access token), on a fresh PostgreSQL
// database (harness.mjs); and what a narrower token sees there.
import assert from 'node:assert/strict';
import { afterEach, it } from 'node:test';

import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

import { apiRequest, cleanup, connect, make, tempDir } from './harness.mjs';
import { serverSuite } from './suite.mjs';

serverSuite('jility-cloud');

// The tools a `tickets:read` token may use (ops.rs: the operations guarded by TicketsRead).
const READ_TOOLS = [
  'jility_estimate_effort',
  'jility_get_dependency_graph',
  'jility_get_epic',
  'jility_get_ticket',
  'jility_get_ticket_history',
  'jility_list_epics',
  'jility_list_notifications',
  'jility_list_sprints',
  'jility_list_templates',
  'jility_list_tickets',
  'jility_list_views',
  'jility_mark_notifications_read',
  'jility_plan_sprint',
  'jility_search_tickets',
  'jility_sprint_stats',
  'jility_suggest_related',
  'jility_watch_ticket',
];

// (serverSuite registered the same hook for the whole file; cleanup() is idempotent.)
afterEach(cleanup);

async function toolsOf(client) {
  const tools = new Map();
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const tool of page.tools) tools.set(tool.name, tool);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

it('jility-cloud: /mcp answers 401 without a token and with a wrong one', async () => {
  const server = await make('jility-cloud', tempDir('jility-cloud'), undefined);
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  for (const extra of [{}, { Authorization: 'Bearer jil_live_not-a-token' }]) {
    const response = await fetch(server.url, { method: 'POST', headers: { ...headers, ...extra }, body: initialize });
    const body = await response.json();
    assert.equal(response.status, 401, JSON.stringify(extra));
    // The same code as the --http edge of every server gives a missing or wrong token.
    assert.equal(body.error.code, 'unauthenticated', JSON.stringify(body));
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer/);
  }
  // The SDK's client without the header cannot connect.
  await assert.rejects(connect({ ...server, headers: undefined }, 'http'));
});

it('jility-cloud: a tickets:read token lists only the read tools, and a write is permission_denied', async () => {
  const server = await make('jility-cloud', tempDir('jility-cloud'), undefined);
  const minted = await apiRequest(server, 'POST', '/tokens', { name: 'reader', scopes: ['tickets:read'] });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  assert.deepEqual(minted.body.scopes, ['tickets:read']);
  assert.match(minted.body.token, /^jil_live_/);

  // The full_access token sees all 39 tools; create_ticket's outputSchema comes from there.
  const full = await connect(server, 'http');
  let everything;
  try {
    everything = await toolsOf(full.client);
    assert.equal(everything.size, 39, [...everything.keys()].join(', '));
    const made = await full.client.callTool({ name: 'jility_create_ticket', arguments: { title: 'Visible to readers' } });
    assert.ok(!made.isError, JSON.stringify(made.structuredContent));
  } finally {
    await full.close();
  }

  const reader = await connect({ ...server, headers: { Authorization: `Bearer ${minted.body.token}` } }, 'http');
  try {
    const tools = await toolsOf(reader.client);
    assert.deepEqual([...tools.keys()].sort(), READ_TOOLS);
    for (const tool of tools.values()) assert.deepEqual(tool.outputSchema, everything.get(tool.name).outputSchema, tool.name);

    // A read works (and the SDK validates it: the tool was listed).
    const listed = await reader.client.callTool({ name: 'jility_list_tickets', arguments: {} });
    assert.ok(!listed.isError, JSON.stringify(listed.structuredContent));
    assert.ok(JSON.stringify(listed.structuredContent).includes('API-1'));

    // A write: an isError result (not a JSON-RPC error), the envelope with permission_denied.
    let result;
    try {
      result = await reader.client.callTool({ name: 'jility_create_ticket', arguments: { title: 'Not allowed' } });
    } catch (err) {
      assert.fail(`the SDK refused the answer: ${err.message}`);
    }
    const structured = result.structuredContent;
    const dump = JSON.stringify(structured);
    assert.equal(result.isError, true, dump);
    assert.equal(structured?.status, 'error', dump);
    assert.equal(structured.error.code, 'permission_denied', dump);
    assert.equal(structured.error.retryable, false, dump);
    for (const key of ['message', 'hint']) assert.ok(typeof structured.error[key] === 'string' && structured.error[key], dump);
    assert.ok(dump.includes('tickets:write'), `the error names the scope needed: ${dump}`);
    // The reader's client never listed create_ticket, so callTool had no schema to check:
    // check with the SDK's own validator against the schema the full_access listing gave.
    const validate = new AjvJsonSchemaValidator().getValidator(everything.get('jility_create_ticket').outputSchema);
    const verdict = validate(structured);
    assert.ok(verdict.valid, `not schema-valid: ${verdict.errorMessage}: ${dump}`);
  } finally {
    await reader.close();
  }
  // Nothing was written by the refused call.
  const after = await apiRequest(server, 'GET', '/tickets');
  assert.equal(after.status, 200);
  assert.ok(!JSON.stringify(after.body).includes('Not allowed'), JSON.stringify(after.body));
});
