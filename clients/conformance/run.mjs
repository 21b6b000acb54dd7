// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// package.json) against every server over Streamable HTTP, each on the fixture the client
// suites use. Scenarios: server-initialize, ping, tools-list, dns-rebinding-protection for
// all; resources-list and prompts-list for the servers that offer resources and prompts.
// Exits 1 when any scenario fails (the suite's own exit status, per scenario).
//
// Usage: node run.mjs [server…]   (MCP_BIN_DIR: where the binaries are; default target/debug)

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { SCENARIOS, SERVERS, httpProcess, make, remoteMock, tempDir } from '../typescript/test/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
if (!fs.existsSync(cli)) {
  console.error(`${cli} is missing: run \`npm ci\` in clients/conformance (scripts/test does)`);
  process.exit(2);
}
const version = JSON.parse(fs.readFileSync(path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json'), 'utf8')).version;
const outDir = process.env.CONFORMANCE_OUT ?? tempDir('conformance');

function scenariosFor(name) {
  const caps = SCENARIOS[name].capabilities;
  const list = ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];
  if (caps.includes('resources')) list.push('resources-list');
  if (caps.includes('prompts')) list.push('prompts-list');
  return list;
}

/** The checks of every checks.json under `dir`. */
function readChecks(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((file) => path.basename(String(file)) === 'checks.json')
    .flatMap((file) => JSON.parse(fs.readFileSync(path.join(dir, String(file)), 'utf8')));
}

const wanted = process.argv.slice(2);
const servers = wanted.length ? wanted : SERVERS;
const failures = [];
const mock = await remoteMock();
try {
  for (const name of servers) {
    const server = await make(name, tempDir(name), mock.url);
    const proc = await httpProcess(server);
    try {
      for (const scenario of scenariosFor(name)) {
        const dir = path.join(outDir, name, scenario);
        const run = spawnSync(process.execPath, [cli, 'server', '--url', proc.url, '--scenario', scenario, '-o', dir], {
          cwd: here,
          encoding: 'utf8',
          timeout: 300_000,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
        });
        // Besides the exit status: the scenario ran checks, and none of them failed.
        const checks = readChecks(dir);
        const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO');
        const ok = run.status === 0 && checks.length > 0 && bad.every((c) => c.status === 'WARNING');
        const warnings = bad.filter((c) => c.status === 'WARNING').map((c) => c.id);
        console.log(`${ok ? 'PASS' : 'FAIL'} conformance@${version} ${name} ${scenario}: ${checks.length} checks${warnings.length ? `, warnings: ${warnings.join(', ')}` : ''}`);
        if (!ok) {
          failures.push(`${name} ${scenario}`);
          console.log(run.stdout);
          console.log(run.stderr);
        }
      }
    } finally {
      await proc.stop();
    }
  }
} finally {
  await mock.close();
}
console.log(`results: ${outDir}`);
if (failures.length) {
  console.log(`conformance failures:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
