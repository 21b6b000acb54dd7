// Fixtures and launchers for the TypeScript client suite: each server on a fresh temp fixture
// made with the real tools (git, jility, git-mile), started over stdio (by the SDK's
// StdioClientTransport) or over Streamable HTTP (by us, with `--http 127.0.0.1:0`), in a
// clean environment without credentials. Mirrors clients/python/harness.py.

import { execFileSync, spawn } from 'node:child_process';
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
process.on('exit', () => {
  if (process.env.KEEP_FIXTURES) return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

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
  return { name: 'jility', command: binary('jility'), args: ['--mcp-server'], cwd: project, env: { ...env, JILITY_ACTOR: 'agent-1' }, vars: {} };
}

/** `count` tickets made with the CLI (for paging). */
export function jilitySeed(server, count) {
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

export function make(name, tmp, mock, credentials = true) {
  switch (name) {
    case 'twig-mcp':
      return twigFixture(tmp, mock, credentials);
    case 'duvet':
      return duvetFixture(tmp);
    case 'jility':
      return jilityFixture(tmp);
    case 'git-mile':
      return gitMileFixture(tmp);
    default:
      throw new Error(name);
  }
}

// ---------------------------------------------------------------------------------------------
// Connecting
// ---------------------------------------------------------------------------------------------

/** Start the server with `--http ADDR`; resolves to {url, stop, stderr()}. */
export async function httpProcess(server, { addr = '127.0.0.1:0', env = server.env } = {}) {
  const child = spawn(server.command, [...server.args, '--http', addr], {
    cwd: server.cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.name} did not announce its HTTP address: ${stderr}`)), 60_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk.toString();
      const match = ANNOUNCE.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${server.name} --http exited with ${code}: ${stderr}`));
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
  return { url, stop, stderr: () => stderr };
}

/** A connected SDK client: {client, close}. */
export async function connect(server, transport) {
  const client = new Client({ name: 'typescript-client-tests', version: '1.0.0' });
  if (transport === 'stdio') {
    const t = new StdioClientTransport({ command: server.command, args: server.args, cwd: server.cwd, env: server.env, stderr: 'ignore' });
    await client.connect(t);
    return { client, close: () => client.close() };
  }
  const proc = await httpProcess(server);
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(proc.url)));
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
