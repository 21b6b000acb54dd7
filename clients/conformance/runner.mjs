// The shared driver of the two conformance runs (clients/conformance/run.mjs: the suite 0.1.x,
// clients/conformance-next/run.mjs: the 0.2 pre-release's 2026-07-28 scenarios): starts every
// server on the fixture the client suites use (twig-mcp, duvet, jility and git-mile with
// `--http 127.0.0.1:0`; jility-cloud: `jility serve` on a fresh PostgreSQL database;
// jility-bridge: `JILITY_MODE=cloud jility --mcp-server --http` on such a serve), runs the
// suite's CLI once per scenario (`server --url … --scenario … -o …`) and reads the checks it
// wrote. A scenario passes when the CLI exits 0, ran at least one check, and no check is a
// FAILURE (WARNINGs are printed, not failed). Excluded scenarios are not run, excluded checks
// do not count; their reasons are printed (and written in clients/README.md).
//
// jility-cloud needs `Authorization: Bearer <token>` on every request and the suite's CLI
// cannot send headers of its own, so its requests go through a local pass-through proxy that
// adds that one header and otherwise passes the raw headers as sent (duplicates and foreign
// Host or Origin included: the DNS-rebinding and header-validation scenarios test what the
// server sees), but for the proxy's own port in a local Host or Origin, which becomes the
// server's (jility serve accepts only its own address).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { SCENARIOS, SERVERS, VARIANTS, cleanup, httpEndpoint, make, remoteMock, scenarioOf, tempDir } from '../typescript/test/harness.mjs';

/** Every server and variant the conformance runs reach: the four over `--http`, `jility serve`
 * (jility-cloud), and the cloud-mode bridge `jility --mcp-server --http` (jility-bridge). */
export const TARGETS = [...SERVERS, 'jility-cloud', 'jility-bridge'];

/** The capabilities the scenario file gives a server or variant (`jility-cloud`: jility's). */
export function capabilitiesOf(name) {
  const scenario = SCENARIOS[scenarioOf(name)];
  if (!scenario) {
    console.error(`unknown server ${name}: one of ${[...SERVERS, ...Object.keys(VARIANTS)].join(', ')}`);
    process.exit(2);
  }
  return scenario.capabilities;
}

/** The suite's CLI and version in a package dir (exits 2 when `npm ci` was not run there). */
export function suiteIn(dir) {
  const pkg = path.join(dir, 'node_modules', '@modelcontextprotocol', 'conformance');
  const cli = path.join(pkg, 'dist', 'index.js');
  if (!fs.existsSync(cli)) {
    console.error(`${cli} is missing: run \`npm ci\` in ${dir} (scripts/test does)`);
    process.exit(2);
  }
  const [major] = process.versions.node.split('.').map(Number);
  if (major < 22) {
    console.error(`the conformance suite needs Node.js >= 22 (this is ${process.version}): scripts/test installs it into target/clients/node22`);
    process.exit(2);
  }
  return { cli, version: JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version };
}

/** The checks of every checks.json under `dir`. */
function readChecks(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true })
    .filter((file) => path.basename(String(file)) === 'checks.json')
    .flatMap((file) => JSON.parse(fs.readFileSync(path.join(dir, String(file)), 'utf8')));
}

/**
 * Run the suite's CLI: {status, stdout, stderr}; killed after 5 minutes. Asynchronous (not
 * spawnSync): the jility-cloud proxy serves the CLI's requests from this process meanwhile.
 */
function cliRun(command, args, cwd) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ status: null, stdout, stderr: `${stderr}${err.message}` });
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** A proxy on 127.0.0.1 to `target` adding `Authorization: Bearer <token>`: {url, close}. */
export async function bearerProxy(target, token) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const [key, value] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
      const lower = key.toLowerCase();
      if (lower === 'authorization') continue;
      // The server sees itself addressed as it would be without the proxy: the proxy's own
      // port in Host and Origin becomes the server's (foreign hosts and origins pass as sent).
      const own = lower === 'host' || lower === 'origin' ? value.replace(new RegExp(`^((?:https?://)?(?:localhost|127\\.0\\.0\\.1|\\[::1\\])):${port}$`), `$1:${upstream.port}`) : value;
      headers.push(key, own);
    }
    headers.push('Authorization', `Bearer ${token}`);
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, setHost: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    forward.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`conformance proxy: ${err.message}`);
    });
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** The URL the suite's CLI is pointed at for `server` (a fixture from make()), and how to stop it. */
async function endpointOf(server) {
  const proc = await httpEndpoint(server);
  if (!server.headers?.Authorization) return proc;
  const proxy = await bearerProxy(proc.url, server.headers.Authorization.replace(/^Bearer /, ''));
  return {
    url: proxy.url,
    stop: async () => {
      await proxy.close();
      await proc.stop();
    },
  };
}

/**
 * Run the suite in `packageDir` against `targets`: `scenariosFor(name)` lists a target's
 * scenarios, `excluded` maps "scenario" or "scenario target" to the reason it is not run,
 * `excludedChecks` maps "scenario:check-id" or "scenario:check-id target" to the reason that
 * check's FAILURE does not fail the scenario (its other checks still count), and
 * `extraArgs` go to every CLI call (e.g. `--spec-version 2026-07-28`). Exits 1 on a failure.
 */
export async function runSuite({ label, packageDir, targets, scenariosFor, excluded = {}, excludedChecks = {}, extraArgs = [] }) {
  const { cli, version } = suiteIn(packageDir);
  const outDir = process.env.CONFORMANCE_OUT ?? tempDir('conformance');
  const failures = [];
  const started = Date.now();
  const mock = await remoteMock();
  try {
    for (const name of targets) {
      const server = await make(name, tempDir(name), mock.url);
      const endpoint = await endpointOf(server);
      try {
        for (const scenario of scenariosFor(name)) {
          const reason = excluded[`${scenario} ${name}`] ?? excluded[scenario];
          if (reason) {
            console.log(`SKIP ${label}@${version} ${name} ${scenario}: ${reason}`);
            continue;
          }
          const dir = path.join(outDir, name, scenario);
          const run = await cliRun(process.execPath, [cli, 'server', '--url', endpoint.url, '--scenario', scenario, ...extraArgs, '-o', dir], packageDir);
          // Besides the exit status: the scenario ran checks, and none of them failed.
          const checks = readChecks(dir);
          const why = (c) => excludedChecks[`${scenario}:${c.id} ${name}`] ?? excludedChecks[`${scenario}:${c.id}`];
          const failed = checks.filter((c) => c.status === 'FAILURE');
          const excusedChecks = failed.filter((c) => why(c));
          const bad = checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO' && c.status !== 'SKIPPED' && !excusedChecks.includes(c));
          // The CLI exits 1 on the excluded checks' failures too: then only they may have failed.
          const exitOk = run.status === 0 || (run.status === 1 && excusedChecks.length > 0 && failed.length === excusedChecks.length);
          const ok = exitOk && checks.length > 0 && bad.every((c) => c.status === 'WARNING');
          const warnings = bad.filter((c) => c.status === 'WARNING').map((c) => c.id);
          console.log(`${ok ? 'PASS' : 'FAIL'} ${label}@${version} ${name} ${scenario}: ${checks.length} checks${warnings.length ? `, warnings: ${warnings.join(', ')}` : ''}`);
          for (const c of excusedChecks) console.log(`    excluded ${c.id}: ${why(c)}`);
          if (!ok) {
            failures.push(`${name} ${scenario}`);
            for (const c of bad.filter((c) => c.status !== 'WARNING')) {
              console.log(`    ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
            }
            if (!checks.length || process.env.CONFORMANCE_VERBOSE) {
              console.log(run.stdout);
              console.log(run.stderr);
            }
          }
        }
      } finally {
        await endpoint.stop();
        await cleanup();
      }
    }
  } finally {
    await mock.close();
  }
  console.log(`${label}@${version}: ${targets.length} servers in ${Math.round((Date.now() - started) / 1000)}s; results: ${outDir}`);
  if (failures.length) {
    console.log(`${label} failures:\n  ${failures.join('\n  ')}`);
    process.exit(1);
  }
}
