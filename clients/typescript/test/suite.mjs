// The checks of one server through the official TypeScript SDK, over stdio and over
// Streamable HTTP. The SDK's Client.callTool validates structuredContent against the tool's
// outputSchema — also on isError results — and throws on a mismatch; every tool is called
// (ok and, where its arguments can make it fail, error), so any mismatch fails a test here.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { SCENARIOS, cleanup, connect, dig, httpEndpoint, httpTransport, jilitySeed, make, remoteMock, scenarioOf, substitute, tempDir, transportsOf } from './harness.mjs';

const SCHEMA_FAILURE = /output schema|structured content/i;

async function allTools(client) {
  const tools = new Map();
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    for (const tool of page.tools) {
      assert.ok(!tools.has(tool.name), `tool ${tool.name} listed twice`);
      tools.set(tool.name, tool);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

function checkErrorObject(error, what) {
  assert.equal(typeof error, 'object', `${what}: error is not an object`);
  for (const key of ['code', 'message', 'hint']) {
    assert.ok(typeof error[key] === 'string' && error[key].length > 0, `${what}: error.${key} missing: ${JSON.stringify(error)}`);
  }
  assert.equal(typeof error.retryable, 'boolean', `${what}: error.retryable missing: ${JSON.stringify(error)}`);
  if ('retry_after_secs' in error) assert.ok(Number.isInteger(error.retry_after_secs), what);
  for (const key of Object.keys(error)) {
    assert.ok(['code', 'message', 'hint', 'retryable', 'retry_after_secs'].includes(key), `${what}: unexpected error.${key}`);
  }
}

/** One scenario call, checked; returns structuredContent. */
async function call(client, server, spec, vars) {
  const args = substitute(spec.args, vars);
  const what = `${server} ${spec.tool} ${JSON.stringify(args)}`;
  const envelope = SCENARIOS[scenarioOf(server)].envelope;
  if (spec.expect === 'rpc_error') {
    await assert.rejects(
      client.callTool({ name: spec.tool, arguments: args }),
      (err) => {
        assert.ok(err instanceof McpError, `${what}: ${err}`);
        assert.doesNotMatch(err.message, SCHEMA_FAILURE, `${what}: ${err.message}`);
        assert.equal(err.code, spec.rpc_code, `${what}: ${err.message}`);
        if (spec.rpc_data_code) {
          checkErrorObject(err.data, `${what} (error data)`);
          assert.equal(err.data.code, spec.rpc_data_code, `${what}: ${JSON.stringify(err.data)}`);
        }
        return true;
      },
      `${what}: expected JSON-RPC error ${spec.rpc_code}`,
    );
    return undefined;
  }
  let result;
  try {
    // Throws McpError when structuredContent does not match the tool's outputSchema.
    result = await client.callTool({ name: spec.tool, arguments: args });
  } catch (err) {
    assert.fail(`${what}: the SDK refused the result: ${err.message}`);
  }
  const structured = result.structuredContent;
  const text = (result.content ?? []).map((b) => b.text ?? '').join('');
  if (structured === undefined && result.isError && !envelope) {
    // git_mile.list and git_mile.show carry the error object as JSON text only: their
    // outputSchema describes the entity or the page, not the error.
    const error = JSON.parse(text).error;
    checkErrorObject(error, what);
    assert.equal(spec.expect, 'error', `${what}: expected ok, got ${text.slice(0, 500)}`);
    if (spec.code) assert.equal(error.code, spec.code, `${what}: ${text.slice(0, 500)}`);
    assert.ok(!spec.fields && !spec.capture, `${what}: no structuredContent to look into`);
    return { error };
  }
  assert.ok(structured !== undefined, `${what}: no structuredContent (text: ${text.slice(0, 300)})`);
  // callTool checked structuredContent against the outputSchema, with the validator listTools
  // cached for the tool; without one it would have checked nothing.
  assert.ok(client.getToolOutputValidator(spec.tool), `${what}: the SDK has no outputSchema validator for the tool`);
  const dump = JSON.stringify(structured);
  if (!envelope) {
    // git-mile answers the same JSON as text and as structuredContent (errors included).
    assert.deepEqual(JSON.parse(text), structured, `${what}: the text is not the JSON of structuredContent`);
  }
  if (spec.expect === 'ok') {
    assert.ok(!result.isError, `${what}: expected ok, got ${dump.slice(0, 500)}`);
    if (envelope) {
      assert.equal(structured.status, 'ok', `${what}: ${dump.slice(0, 500)}`);
      assert.ok('data' in structured, `${what}: ${dump.slice(0, 500)}`);
    }
  } else {
    assert.equal(result.isError, true, `${what}: expected an error, got ${dump.slice(0, 500)}`);
    if (envelope) {
      assert.equal(structured.status, 'error', `${what}: ${dump.slice(0, 500)}`);
      checkErrorObject(structured.error, what);
    } else {
      // git-mile's writes: structuredContent is {error: {...}} (the error branch of their
      // outputSchema's anyOf, which the SDK accepted above), nothing else.
      assert.deepEqual(Object.keys(structured), ['error'], `${what}: ${dump.slice(0, 500)}`);
      checkErrorObject(structured.error, what);
    }
    if (spec.code) assert.equal(structured.error.code, spec.code, `${what}: ${dump.slice(0, 500)}`);
  }
  if (spec.contains) assert.ok(dump.includes(spec.contains), `${what}: ${JSON.stringify(spec.contains)} not in ${dump.slice(0, 800)}`);
  for (const [dotted, expected] of Object.entries(substitute(spec.fields ?? {}, vars))) {
    const got = dotted.split('.').reduce((value, part) => (value != null && typeof value === 'object' ? value[part] : undefined), structured);
    assert.deepEqual(got, expected, `${what}: ${dotted} is ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
  }
  for (const [name, dotted] of Object.entries(spec.capture ?? {})) vars[name] = String(dig(structured, dotted));
  return structured;
}

function pageOf(server, structured) {
  if (SCENARIOS[scenarioOf(server)].envelope) {
    const data = structured.data;
    const items = Array.isArray(data) ? data : Object.values(data).find(Array.isArray);
    assert.ok(structured.page && Number.isInteger(structured.page.total), `page missing: ${JSON.stringify(structured).slice(0, 300)}`);
    return { items, next: structured.page.next_cursor, total: structured.page.total };
  }
  return { items: structured.items, next: structured.nextCursor ?? undefined };
}

async function walk(client, server, spec, vars) {
  const args = substitute(spec.args, vars);
  const items = [];
  let cursor;
  let pages = 0;
  let total;
  do {
    const result = await client.callTool({ name: spec.tool, arguments: { ...args, limit: spec.limit, ...(cursor ? { cursor } : {}) } });
    assert.ok(!result.isError, JSON.stringify(result.structuredContent));
    const page = pageOf(server, result.structuredContent);
    pages += 1;
    assert.ok(pages <= 100, 'the walk does not end');
    assert.ok(page.items.length <= spec.limit);
    if (page.next) assert.equal(page.items.length, spec.limit, 'a page before the last is short');
    if (total !== undefined) assert.equal(page.total, total, 'total changed between pages');
    total = page.total;
    items.push(...page.items);
    cursor = page.next;
  } while (cursor);
  assert.ok(pages > 1, `${server}: one page only; the fixture is too small`);
  if (total !== undefined) assert.equal(items.length, total);
  if (spec.total !== undefined) assert.equal(items.length, spec.total);
  const keys = items.map((i) => JSON.stringify(i));
  assert.equal(new Set(keys).size, keys.length, 'an item repeats across pages');
  return items;
}

/** The suite of a server, or of a variant (e.g. 'jility-cloud': jility's scenario, reached
 * another way; see harness.mjs VARIANTS). */
export function serverSuite(name) {
  const scenario = SCENARIOS[scenarioOf(name)];
  let mock;
  before(async () => {
    mock = await remoteMock();
  });
  after(async () => {
    await mock.close();
  });
  // Stop the processes and drop the databases the test's fixture made, also when it failed.
  afterEach(cleanup);

  for (const transport of transportsOf(name)) {
    describe(`${name} over ${transport}`, () => {
      it('initializes, lists its tools, and answers every tool call as its outputSchema says', async () => {
        const server = await make(name, tempDir(name), mock.url);
        const { client, close } = await connect(server, transport);
        try {
          assert.equal(client.getServerVersion()?.name, scenarioOf(name));
          const caps = client.getServerCapabilities();
          assert.ok(caps.tools);
          assert.equal(Boolean(caps.resources), scenario.capabilities.includes('resources'));
          assert.equal(Boolean(caps.prompts), scenario.capabilities.includes('prompts'));
          await client.ping();
          const tools = await allTools(client);
          const covered = new Set([...scenario.calls, ...(scenario.calls_without_credentials ?? [])].map((c) => c.tool));
          assert.deepEqual([...tools.keys()].sort(), [...covered].sort(), 'every tool is called by the scenario');
          for (const tool of tools.values()) assert.ok(tool.outputSchema, `${tool.name} has no outputSchema`);
          const vars = { ...server.vars };
          for (const spec of scenario.calls) await call(client, name, spec, vars);
          if (server.actor) {
            // jility records who wrote: JILITY_ACTOR locally, the token's name in the cloud.
            const got = await client.callTool({ name: 'jility_get_ticket', arguments: { ticket_id: 'API-1' } });
            assert.equal(got.structuredContent.data.ticket.created_by, server.actor, JSON.stringify(got.structuredContent.data.ticket));
          }
          if (caps.resources) {
            const resources = await client.listResources();
            assert.ok(resources.resources.length > 0);
            for (const uri of [...resources.resources.map((r) => r.uri), ...(scenario.read_resources ?? [])]) {
              const read = await client.readResource({ uri });
              assert.ok(read.contents.length > 0, uri);
              for (const content of read.contents) {
                if (content.mimeType === 'application/json') JSON.parse(content.text);
              }
            }
          }
          if (caps.prompts) {
            const prompts = await client.listPrompts();
            assert.ok(prompts.prompts.length > 0);
            for (const prompt of prompts.prompts) {
              const got = await client.getPrompt({ name: prompt.name, arguments: {} });
              assert.ok(got.messages.length > 0, prompt.name);
            }
          }
        } finally {
          await close();
        }
      });

      if (scenario.calls_without_credentials) {
        it('network tools without credentials answer credentials_missing', async () => {
          const server = await make(name, tempDir(name), mock.url, false);
          const { client, close } = await connect(server, transport);
          try {
            await allTools(client);
            for (const spec of scenario.calls_without_credentials) {
              const structured = await call(client, name, spec, {});
              assert.equal(structured.error.retryable, false);
            }
          } finally {
            await close();
          }
        });
      }

      if (scenario.read_only) {
        it(`started with ${scenario.read_only.args.join(' ')}, lists only ${scenario.read_only.tools.join(', ')} and refuses the others`, async () => {
          const server = await make(name, tempDir(name), mock.url);
          const { client, close } = await connect({ ...server, args: [...server.args, ...scenario.read_only.args] }, transport);
          try {
            const tools = await allTools(client);
            assert.deepEqual([...tools.keys()].sort(), [...scenario.read_only.tools].sort());
            const vars = { ...server.vars };
            for (const spec of scenario.read_only.calls) await call(client, name, spec, vars);
          } finally {
            await close();
          }
        });
      }

      it('walks a list with cursors; forged cursors are refused', async () => {
        const server = await make(name, tempDir(name), mock.url);
        if (scenarioOf(name) === 'jility') await jilitySeed(server, 5);
        const { client, close } = await connect(server, transport);
        try {
          const tools = await allTools(client);
          const first = await walk(client, name, scenario.paged, server.vars);
          assert.deepEqual(await walk(client, name, scenario.paged, server.vars), first);
          const spec = scenario.forged_cursor;
          const args = substitute(spec.args, server.vars);
          const real = pageOf(name, (await client.callTool({ name: spec.tool, arguments: { ...args, limit: 1 } })).structuredContent).next;
          const forged = ['AAAAnot-a-cursor'];
          if (real) forged.push(real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A'));
          for (const cursor of forged) {
            const what = `${name} ${spec.tool} cursor=${cursor}`;
            if (scenario.envelope) {
              const result = await client.callTool({ name: spec.tool, arguments: { ...args, cursor } });
              assert.equal(result.isError, true, `${what}: accepted`);
              checkErrorObject(result.structuredContent.error, what);
              assert.equal(result.structuredContent.error.code, 'invalid_params', what);
            } else {
              await assert.rejects(client.callTool({ name: spec.tool, arguments: { ...args, cursor } }), (err) => {
                assert.doesNotMatch(err.message, SCHEMA_FAILURE);
                assert.equal(err.code, -32602, `${what}: ${err.message}`);
                checkErrorObject(err.data, `${what} (error data)`);
                assert.equal(err.data.code, 'invalid_cursor', what);
                return true;
              });
            }
          }
          assert.ok(tools.has(spec.tool));
        } finally {
          await close();
        }
      });
    });
  }

  it(`${name}: a cursor from one HTTP session continues in another session`, async () => {
    const server = await make(name, tempDir(name), mock.url);
    if (scenarioOf(name) === 'jility') await jilitySeed(server, 3);
    const spec = scenario.paged;
    const args = { ...substitute(spec.args, server.vars), limit: 1 };
    const proc = await httpEndpoint(server);
    try {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
      const one = new Client({ name: 'one', version: '1.0.0' });
      await one.connect(httpTransport(server, proc.url));
      await one.listTools();
      const first = pageOf(name, (await one.callTool({ name: spec.tool, arguments: args })).structuredContent);
      await one.close();
      assert.ok(first.next);
      const two = new Client({ name: 'two', version: '1.0.0' });
      await two.connect(httpTransport(server, proc.url));
      await two.listTools();
      const result = await two.callTool({ name: spec.tool, arguments: { ...args, cursor: first.next } });
      await two.close();
      assert.ok(!result.isError, JSON.stringify(result.structuredContent));
      assert.notDeepEqual(pageOf(name, result.structuredContent).items, first.items);
    } finally {
      await proc.stop();
    }
  });
}
