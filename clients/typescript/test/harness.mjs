// Fixtures and launchers for the TypeScript client suite: each server on a fresh temp fixture
// made with the real tools (git, jility, git-mile), started over stdio (by the SDK's
// StdioClientTransport) or over Streamable HTTP (by us, with `--http 127.0.0.1:0`), in a
// clean environment without credentials. Mirrors clients/python/harness.py.

import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..', '..');
export const FIXTURES = path.join(REPO, 'clients', 'fixtures');
export const BIN_DIR = path.resolve(process.env.MCP_BIN_DIR ?? path.join(REPO, 'target', 'debug'));
export const SCENARIOS = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'scenarios.json'), 'utf8')).servers;
export const SERVERS = ['twig-mcp', 'duvet', 'jility', 'git-mile'];
export const TRANSPORTS = ['stdio', 'http'];
const ANNOUNCE = /serving MCP over HTTP at (http:\/\/\S+\/mcp)/;

// Variants: the same server reached another way, running the scenario of the server they name.
//   jility-cloud   `jility serve` on a fresh PostgreSQL database, its /mcp endpoint (Streamable
//                  HTTP, `Authorization: Bearer` with the workspace's first token): remote only
//   jility-bridge  `JILITY_MODE=cloud jility --mcp-server` (stdio, and `--http`) talking to the
//                  API of such a `jility serve`
export const VARIANTS = { 'jility-cloud': 'jility', 'jility-bridge': 'jility' };
const VARIANT_TRANSPORTS = { 'jility-cloud': ['http'] };
const SERVE_ANNOUNCE = /serving the API at (http:\/\/\S+)\/api\/v1 and MCP at (http:\/\/\S+\/mcp)/;
// The PostgreSQL server the cloud variants make their databases on (scripts/test ensures it).
const DATABASE_URL = process.env.JILITY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The scenario a server or variant runs: `jility-cloud` runs jility's. */
export function scenarioOf(name) {
  return VARIANTS[name] ?? name;
}

/** The transports a server or variant is tested over. */
export function transportsOf(name) {
  return VARIANT_TRANSPORTS[name] ?? TRANSPORTS;
}

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Ann Example',
  GIT_AUTHOR_EMAIL: 'ann@example.com',
  GIT_COMMITTER_NAME: 'Ann Example',
  GIT_COMMITTER_EMAIL: 'ann@example.com',
};

export function binary(name) {
  const file = path.join(BIN_DIR, name);
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: build the workspace binaries first (scripts/test does)`);
  }
  return file;
}

/** PATH, a temp HOME, git without user config; nothing else (no GITHUB_TOKEN, JIRA_*, …). */
function baseEnv(home) {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    LANG: 'C.UTF-8',
    ...GIT_ENV,
  };
}

function run(cmd, args, cwd, env) {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const tempDirs = [];
const databases = new Set();
process.on('exit', () => {
  // Databases a test did not get to drop (the run was interrupted).
  for (const name of databases) {
    try {
      dropDatabase(name);
    } catch {
      // nothing more to do on the way out
    }
  }
  if (process.env.KEEP_FIXTURES) return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

// What fixtures made besides temp dirs (processes, databases), undone by cleanup(): the
// suites call it after every test (afterEach), also when the test failed.
const cleanups = [];

/** Undo what the fixtures made, newest first; every step runs even if an earlier one threw. */
export async function cleanup() {
  const errors = [];
  while (cleanups.length) {
    try {
      await cleanups.pop()();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length) throw errors[0];
}

function psql(sql) {
  execFileSync('psql', [DATABASE_URL, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
}

function dropDatabase(name) {
  psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  databases.delete(name);
}

/** A fresh PostgreSQL database (`jility_sdk_<random>`), dropped by cleanup(); its URL. */
export function pgDatabase() {
  const name = `jility_sdk_${crypto.randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${name}`);
  databases.add(name);
  cleanups.push(() => dropDatabase(name));
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A temp dir removed when the process exits (kept with KEEP_FIXTURES=1). */
export function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `mcp-clients-${label}-`));
  tempDirs.push(dir);
  return dir;
}

// ---------------------------------------------------------------------------------------------
// The local GitHub/Jira mock for twig-mcp
// ---------------------------------------------------------------------------------------------

/** Serve clients/fixtures/twig/remote.json on 127.0.0.1; resolves to {url, close}. */
export async function remoteMock() {
  const spec = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'twig', 'remote.json'), 'utf8'));
  const server = http.createServer((req, res) => {
    const route = req.url.split('?')[0];
    const body = spec.routes[route];
    const data = JSON.stringify(body ?? spec.not_found);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(data);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

function gitRepo(dir, env) {
  fs.mkdirSync(dir);
  run('git', ['init', '-q', '-b', 'main'], dir, env);
  fs.writeFileSync(path.join(dir, 'README.md'), 'hello\n');
  run('git', ['add', 'README.md'], dir, env);
  run('git', ['commit', '-q', '-m', 'initial'], dir, env);
}

export function twigFixture(tmp, mock, credentials = true) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env = baseEnv(home);
  const repo = path.join(tmp, 'repo');
  gitRepo(repo, env);
  for (const branch of ['feat/auth', 'feat/auth-ui', 'feat/billing', 'feat/billing-ui', 'scratch']) {
    run('git', ['branch', branch], repo, env);
  }
  run('git', ['checkout', '-q', 'feat/auth'], repo, env);
  run('git', ['remote', 'add', 'origin', 'https://github.com/octo/widgets.git'], repo, env);
  fs.mkdirSync(path.join(repo, '.twig'));
  fs.copyFileSync(path.join(FIXTURES, 'twig', 'state.json'), path.join(repo, '.twig', 'state.json'));
  if (credentials) {
    const netrc = path.join(home, '.netrc');
    fs.writeFileSync(netrc, 'machine 127.0.0.1\n  login dev@example.com\n  password test-token\n');
    fs.chmodSync(netrc, 0o600);
  }
  return { name: 'twig-mcp', command: binary('twig-mcp'), args: [], cwd: repo, env: { ...env, GITHUB_API_URL: mock, JIRA_HOST: mock }, vars: {} };
}

export function duvetFixture(tmp) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const project = path.join(tmp, 'project');
  fs.cpSync(path.join(FIXTURES, 'duvet-project'), project, { recursive: true });
  return { name: 'duvet', command: binary('duvet'), args: ['mcp'], cwd: project, env: baseEnv(home), vars: {} };
}

export function jilityFixture(tmp) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const project = path.join(tmp, 'project');
  fs.mkdirSync(project);
  const env = baseEnv(home);
  run(binary('jility'), ['--json', 'init', '--key', 'API'], project, { ...env, JILITY_ACTOR: 'alice' });
  return { name: 'jility', command: binary('jility'), args: ['--mcp-server'], cwd: project, env: { ...env, JILITY_ACTOR: 'agent-1' }, vars: {}, actor: 'agent-1' };
}

/**
 * A fresh database with workspace `API` (`jility admin create-workspace`) and `jility serve`
 * on it; `jility-cloud` connects to its /mcp with the bootstrap token, `jility-bridge` is
 * `JILITY_MODE=cloud jility --mcp-server` pointed at its API. Everything goes at cleanup().
 */
export async function jilityCloudFixture(tmp, name) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const project = path.join(tmp, 'project'); // the bridge's working directory: no .jility anywhere
  fs.mkdirSync(project);
  const env = baseEnv(home);
  const database = pgDatabase();
  const jility = binary('jility');
  const { token } = JSON.parse(run(jility, ['admin', 'create-workspace', 'acme', '--database-url', database, '--key', 'API', '--json'], project, env));
  const proc = await announcedProcess(
    'jility serve',
    jility,
    ['serve', '--listen', '127.0.0.1:0', '--database-url', database, '--rate-limit', '100000'],
    { cwd: project, env },
    SERVE_ANNOUNCE,
  );
  cleanups.push(proc.stop);
  const [, api, mcp] = proc.match;
  const common = { name, command: jility, cwd: project, vars: {}, actor: 'bootstrap', api, token };
  if (name === 'jility-cloud') {
    // Writes are the token's: create-workspace names its token `bootstrap`.
    return { ...common, args: [], env, url: mcp, headers: { Authorization: `Bearer ${token}` } };
  }
  return { ...common, args: ['--mcp-server'], env: { ...env, JILITY_MODE: 'cloud', JILITY_API_URL: api, JILITY_API_TOKEN: token } };
}

/** A request to the cloud API (`/api/v1` + path) with a bearer token: {status, body}. */
export async function apiRequest(server, method, route, body, token = server.token) {
  const response = await fetch(`${server.api}/api/v1${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** `count` tickets made with the CLI (for paging); in the cloud (where the ticket CLI does
 * not work) with `POST /api/v1/tickets`. */
export async function jilitySeed(server, count) {
  if (server.api) {
    for (let i = 1; i <= count; i++) {
      const { status, body } = await apiRequest(server, 'POST', '/tickets', { title: `Seeded ticket ${i}` });
      if (status !== 200 && status !== 201) throw new Error(`POST /api/v1/tickets: ${status} ${JSON.stringify(body)}`);
    }
    return;
  }
  for (let i = 1; i <= count; i++) {
    run(binary('jility'), ['--json', 'ticket', 'create', '--title', `Seeded ticket ${i}`], server.cwd, { ...server.env, JILITY_ACTOR: 'alice' });
  }
}

export function gitMileFixture(tmp) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env = baseEnv(home);
  const repo = path.join(tmp, 'repo');
  gitRepo(repo, env);
  const gm = binary('git-mile');
  const milestone = run(gm, ['create', 'milestone', '--title', 'v1.0', '--description', 'First release'], repo, env);
  const issue1 = run(gm, ['create', 'issue', '--title', 'Crash on start', '--label', 'bug', '--milestone', milestone.slice(0, 8)], repo, env);
  const issue2 = run(gm, ['create', 'issue', '--title', 'Slow search', '--label', 'perf'], repo, env);
  const issue3 = run(gm, ['create', 'issue', '--title', 'Docs typo', '--label', 'docs'], repo, env);
  run(gm, ['comment', issue1, '--body', 'Seen on Linux too'], repo, env);
  return { name: 'git-mile', command: gm, args: ['mcp-server'], cwd: repo, env, vars: { milestone, issue1, issue2, issue3 } };
}

/** The fixture of a server or variant (async: the cloud variants start `jility serve`). */
export async function make(name, tmp, mock, credentials = true) {
  switch (name) {
    case 'twig-mcp':
      return twigFixture(tmp, mock, credentials);
    case 'duvet':
      return duvetFixture(tmp);
    case 'jility':
      return jilityFixture(tmp);
    case 'git-mile':
      return gitMileFixture(tmp);
    case 'jility-cloud':
    case 'jility-bridge':
      return jilityCloudFixture(tmp, name);
    default:
      throw new Error(name);
  }
}

// ---------------------------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------------------------

/** Spawn a process and wait until its stderr matches `pattern`: {match, stop, stderr()}. */
async function announcedProcess(what, command, args, { cwd, env }, pattern) {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not announce its address: ${stderr}`));
    }, 60_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const found = pattern.exec(stderr);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${stderr}`));
    });
  });
  child.removeAllListeners('exit');
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { match, stop, stderr: () => stderr };
}

/** Start the server with `--http ADDR`; resolves to {url, stop, stderr()}. */
export async function httpProcess(server, { addr = '127.0.0.1:0', env = server.env } = {}) {
  const proc = await announcedProcess(`${server.name} --http`, server.command, [...server.args, '--http', addr], { cwd: server.cwd, env }, ANNOUNCE);
  return { url: proc.match[1], stop: proc.stop, stderr: proc.stderr };
}

/** The server's Streamable HTTP endpoint: jility-cloud's /mcp (served already; stop does
 * nothing), else a `--http` process: {url, stop}. */
export async function httpEndpoint(server) {
  if (server.url) return { url: server.url, stop: async () => {} };
  return httpProcess(server);
}

/** An SDK transport to `url`, sending the server's headers (jility-cloud: its bearer token). */
export function httpTransport(server, url) {
  return new StreamableHTTPClientTransport(new URL(url), server.headers ? { requestInit: { headers: server.headers } } : undefined);
}

/** A connected SDK client: {client, close}. */
export async function connect(server, transport) {
  const client = new Client({ name: 'typescript-client-tests', version: '1.0.0' });
  if (transport === 'stdio') {
    if (server.url) throw new Error(`${server.name} is remote only`);
    const t = new StdioClientTransport({ command: server.command, args: server.args, cwd: server.cwd, env: server.env, stderr: 'ignore' });
    await client.connect(t);
    return { client, close: () => client.close() };
  }
  const proc = await httpEndpoint(server);
  try {
    await client.connect(httpTransport(server, proc.url));
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    client,
    url: proc.url,
    close: async () => {
      await client.close();
      await proc.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checking results
// ---------------------------------------------------------------------------------------------

export function substitute(value, vars) {
  if (typeof value === 'string') {
    return value.replace(/\$\{(\w+)\}/g, (_, name) => {
      if (!(name in vars)) throw new Error(`no variable ${name}`);
      return vars[name];
    });
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]));
  }
  return value;
}

export function dig(value, dotted) {
  for (const part of dotted.split('.')) value = value[part];
  return value;
}
