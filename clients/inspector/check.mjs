// The MCP Inspector CLI's strict tool-schema check (@modelcontextprotocol/inspector, pinned in
// package.json: `--cli <url> --method tools/list --strict --format json`, its schema
// portability lint) against every server over Streamable HTTP, `jility serve` (with its
// bearer token, `--header`) and the cloud-mode bridge over `--http`. Fails on any finding in an input schema (warnings included: a
// client that cannot use an input schema cannot call the tool) and on any error-severity
// finding; warnings about output schemas are printed. Needs Node.js >= 22.19.
//
// Usage: node check.mjs [server…]   (as clients/conformance/run.mjs)

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { TARGETS } from '../conformance/runner.mjs';
import { cleanup, httpEndpoint, make, remoteMock, tempDir } from '../typescript/test/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.join(here, 'node_modules', '@modelcontextprotocol', 'inspector');
const cli = path.join(pkg, 'clients', 'launcher', 'build', 'index.js');
if (!fs.existsSync(cli)) {
  console.error(`${cli} is missing: run \`npm ci\` in clients/inspector (scripts/test does)`);
  process.exit(2);
}
const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;

/** Run the Inspector CLI (its catalog and secrets in a temp HOME): {status, stdout, stderr}. */
function inspector(args) {
  const home = tempDir('inspector-home');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, '--cli', ...args], {
      cwd: here,
      env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

const wanted = process.argv.slice(2);
const failures = [];
const mock = await remoteMock();
try {
  for (const name of wanted.length ? wanted : TARGETS) {
    const server = await make(name, tempDir(name), mock.url);
    const endpoint = await httpEndpoint(server);
    try {
      const headers = Object.entries(server.headers ?? {}).flatMap(([key, value]) => ['--header', `${key}: ${value}`]);
      const run = await inspector([endpoint.url, '--transport', 'http', ...headers, '--method', 'tools/list', '--strict', '--format', 'json']);
      let envelope;
      try {
        envelope = JSON.parse(run.stdout.trim().split('\n').pop() ?? '');
      } catch {
        envelope = undefined;
      }
      const tools = envelope?.result?.tools;
      const findings = (envelope?.schemaFindings ?? []).flatMap(({ toolName, findings }) => findings.map((f) => ({ toolName, ...f })));
      const bad = findings.filter((f) => f.schema === 'inputSchema' || f.severity === 'error');
      const ok = Array.isArray(tools) && tools.length > 0 && bad.length === 0 && (run.status === 0 || run.status === 6) && (run.status === 0) === !findings.some((f) => f.severity === 'error');
      console.log(`${ok ? 'PASS' : 'FAIL'} inspector@${version} ${name} tools/list --strict: ${tools?.length ?? 0} tools, ${findings.length} findings`);
      for (const f of bad) {
        console.log(`    ${f.severity} ${f.toolName} ${f.schema} ${JSON.stringify(f.path)}: ${String(f.issue).split('. ')[0]}`);
      }
      if (findings.length > bad.length) console.log(`    (${findings.length - bad.length} output-schema warnings not failed; --strict shows them)`);
      if (!ok) {
        failures.push(name);
        if (!Array.isArray(tools)) console.log(`exit ${run.status}\n${run.stdout}\n${run.stderr}`);
      }
    } finally {
      await endpoint.stop();
      await cleanup();
    }
  }
} finally {
  await mock.close();
}
if (failures.length) {
  console.log(`inspector --strict failures:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
