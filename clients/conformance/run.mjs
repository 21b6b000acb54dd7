// Runs the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.x, pinned in
// package.json) against every server over Streamable HTTP, each on the fixture the client
// suites use, against `jility serve` (jility-cloud, with its bearer token; runner.mjs) and the
// cloud-mode bridge over `--http` (jility-bridge).
// Scenarios: server-initialize, ping, tools-list, dns-rebinding-protection,
// server-sse-multiple-streams for all; resources-list and prompts-list for the servers that
// offer resources and prompts. The suite's other server scenarios need its reference server's
// tools, resources and prompts (`test_simple_text`, `test://static-text`, …): clients/README.md.
// Needs Node.js >= 22 (scripts/test takes it from target/clients/node22 when the machine's is
// older). Exits 1 when any scenario fails.
//
// Usage: node run.mjs [server…]   (twig-mcp duvet jility git-mile jility-cloud jility-bridge;
//        MCP_BIN_DIR: where the binaries are, default target/debug; CONFORMANCE_OUT: results)

import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { TARGETS, capabilitiesOf, runSuite } from './runner.mjs';

function scenariosFor(name) {
  const caps = capabilitiesOf(name);
  const list = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection', 'server-sse-multiple-streams'];
  if (caps.includes('resources')) list.push('resources-list');
  if (caps.includes('prompts')) list.push('prompts-list');
  return process.env.CONFORMANCE_SCENARIOS ? process.env.CONFORMANCE_SCENARIOS.split(',') : list;
}

const wanted = process.argv.slice(2);
await runSuite({
  label: 'conformance',
  packageDir: path.dirname(fileURLToPath(import.meta.url)),
  targets: wanted.length ? wanted : TARGETS,
  scenariosFor,
});
