// Runs the MCP conformance suite's requirement sets (`--requirements 2025-11-25` and
// `--requirements 2026-07-28`: every scenario a server must pass to conform to that revision,
// at its own wire) in full against the kit's conformance fixture,
// `target/debug/mcp-conformance-fixture` (crates/mcp-conformance-fixture: the suite's
// reference tools, prompts and resources served by mcp-common; built with `cargo build -p
// mcp-conformance-fixture --features fixture`, which this script does not do). One fixture
// process per revision (`--http 127.0.0.1:0`, its address read from its stderr as for the
// servers), one CLI run per revision; the checks it wrote are read back per scenario.
//
// A required scenario passes when it ran at least one check and none is a FAILURE (WARNINGs
// are printed); every required scenario must pass, with no expected-failures baseline, and
// the CLI must exit 0. The `not_scored` scenarios (extensions, pending ones) run too and are
// reported, but do not fail the run. This is the conformance part of the suite's
// `tier-check`, which cannot run offline (clients/README.md).
//
// Usage: node fixture.mjs [revision…]   (default: both; `MCP_BIN_DIR` as for the servers,
// `CONFORMANCE_OUT` keeps the results, `CONFORMANCE_VERBOSE=1` prints the CLI's output)
// Exits 1 when a required scenario fails, 2 when the suite or the fixture is missing.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import YAML from 'yaml';

const REVISIONS = ['2025-11-25', '2026-07-28'];
const FIXTURE = 'mcp-conformance-fixture';
/** What a server writes to stderr once it listens (mcp-common's `serve`). */
const ANNOUNCE = /serving MCP over HTTP at (http:\/\/\S+\/mcp)/;

const packageDir = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(packageDir, '..', '..');
const pkg = path.join(packageDir, 'node_modules', '@modelcontextprotocol', 'conformance');
const cli = path.join(pkg, 'dist', 'index.js');
if (!fs.existsSync(cli)) {
  console.error(`${cli} is missing: run \`npm ci\` in ${packageDir} (scripts/test does)`);
  process.exit(2);
}
if (Number(process.versions.node.split('.')[0]) < 22) {
  console.error(`the conformance suite needs Node.js >= 22 (this is ${process.version}): scripts/test installs it into target/clients/node22`);
  process.exit(2);
}
const { version } = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
const binDir = path.resolve(process.env.MCP_BIN_DIR ?? path.join(repo, 'target', 'debug'));
const binary = path.join(binDir, FIXTURE);
if (!fs.existsSync(binary)) {
  console.error(`${binary} is missing: cargo build -p ${FIXTURE} --features fixture --bin ${FIXTURE} (scripts/test does)`);
  process.exit(2);
}

/** The server scenarios of a requirement set: {required: [name], notScored: [{scenario, reason}]}. */
function requirementsOf(revision) {
  const file = path.join(packageDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'requirements', `${revision}.yaml`);
  if (!fs.existsSync(file)) {
    console.error(`no requirement set ${revision} in the suite ${version} (${file})`);
    process.exit(2);
  }
  const set = YAML.parse(fs.readFileSync(file, 'utf8'));
  return {
    required: set.server ?? [],
    notScored: (set.not_scored ?? []).filter((entry) => entry.leg === 'server'),
  };
}

/** The checks the CLI wrote for `scenario` under `dir` (`server-<scenario>-<time>/checks.json`). */
function checksOf(dir, scenario) {
  if (!fs.existsSync(dir)) return null;
  const prefix = `server-${scenario.replaceAll('/', '-')}-`;
  const runs = fs.readdirSync(dir).filter((name) => name.startsWith(prefix) && /^\d{4}-\d\d-\d\dT/.test(name.slice(prefix.length)));
  if (!runs.length) return null;
  return runs.flatMap((run) => {
    const file = path.join(dir, run, 'checks.json');
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : [];
  });
}

/**
 * Start the fixture with `--http 127.0.0.1:0` in a clean environment and wait for the address
 * it announces on stderr: {url, stop}.
 */
function startFixture() {
  const child = spawn(binary, ['--http', '127.0.0.1:0'], {
    cwd: packageDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${FIXTURE} did not announce its address: ${stderr}`));
    }, 60_000);
    const exited = (code) => {
      clearTimeout(timer);
      reject(new Error(`${FIXTURE} exited with ${code}: ${stderr}`));
    };
    child.on('exit', exited);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const found = ANNOUNCE.exec(stderr);
      if (!found) return;
      clearTimeout(timer);
      child.off('exit', exited);
      const stop = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await gone;
        clearTimeout(kill);
      };
      resolve({ url: found[1], stop });
    });
  });
}

/** Run the suite's CLI: {status, output}; killed after 10 minutes. */
function cliRun(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: packageDir,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ status: null, output: `${output}${err.message}` });
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

/** One scenario's verdict: {ok, line, details}. */
function verdict(revision, scenario, checks, note) {
  if (!checks || !checks.length) {
    return { ok: false, line: `FAIL ${revision} ${scenario}${note}: no checks ran`, failed: [], details: [] };
  }
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warnings = checks.filter((c) => c.status === 'WARNING').map((c) => c.id);
  const ok = failed.length === 0;
  const line = `${ok ? 'PASS' : 'FAIL'} ${revision} ${scenario}${note}: ${checks.length} checks${warnings.length ? `, warnings: ${warnings.join(', ')}` : ''}`;
  return {
    ok,
    line,
    failed: failed.map((c) => c.id),
    details: failed.map((c) => `    FAILURE ${c.id}: ${(c.errorMessage ?? c.description ?? '').slice(0, 500)}`),
  };
}

const wanted = process.argv.slice(2);
const revisions = wanted.length ? wanted : REVISIONS;
const outDir = process.env.CONFORMANCE_OUT ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-fixture-'));
const started = Date.now();
const failures = [];
const summary = [];
for (const revision of revisions) {
  const { required, notScored } = requirementsOf(revision);
  const dir = path.join(outDir, revision);
  fs.rmSync(dir, { recursive: true, force: true });
  const server = await startFixture();
  let run;
  try {
    run = await cliRun(['server', '--url', server.url, '--requirements', revision, '-o', dir]);
  } finally {
    await server.stop();
  }
  let passed = 0;
  for (const scenario of required) {
    const v = verdict(revision, scenario, checksOf(dir, scenario), '');
    console.log(v.line);
    for (const line of v.details) console.log(line);
    if (v.ok) passed += 1;
    else failures.push(`${revision} ${scenario}`);
  }
  let notScoredPassed = 0;
  for (const { scenario, reason } of notScored) {
    const v = verdict(revision, scenario, checksOf(dir, scenario), ` (not scored: ${reason})`);
    console.log(v.line);
    // Reported, not failed: the failing checks by name only.
    if (v.failed.length) console.log(`    failing: ${v.failed.join(', ')}`);
    if (v.ok) notScoredPassed += 1;
  }
  if (run.status !== 0) {
    failures.push(`${revision}: the suite's CLI exited ${run.status}`);
  }
  if (run.status !== 0 || process.env.CONFORMANCE_VERBOSE) console.log(run.output);
  summary.push(`${revision}: required ${passed}/${required.length} passed; not scored ${notScoredPassed}/${notScored.length} passed`);
}
console.log(`conformance-fixture@${version} (${FIXTURE}) in ${Math.round((Date.now() - started) / 1000)}s; results: ${outDir}`);
for (const line of summary) console.log(`  ${line}`);
if (failures.length) {
  console.log(`conformance-fixture failures:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
