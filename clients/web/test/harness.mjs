// Fixtures for the browser suite: a jility project made with the built binary, `jility web`
// on a free loopback port (its address read from its first stdout line), an MCP agent (the
// official TypeScript SDK's stdio client on `jility --mcp-server` in the same project), and
// Chromium driven by playwright-core — Debian's /usr/bin/chromium, never a downloaded browser.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..', '..');
export const BIN_DIR = path.resolve(process.env.MCP_BIN_DIR ?? path.join(REPO, 'target', 'debug'));
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const DATABASE_URL = process.env.JILITY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The person `jility web` serves locally, and the agent that writes through MCP. */
export const HUMAN = 'alice';
export const AGENT = 'agent-1';

export function binary(name) {
  const file = path.join(BIN_DIR, name);
  if (!fs.existsSync(file)) {
    throw new Error(`${file} is missing: build the workspace binaries first (scripts/test does)`);
  }
  return file;
}

// ---- cleanup ---------------------------------------------------------------------------------

const tempDirs = [];
const databases = new Set();
const cleanups = [];
process.on('exit', () => {
  for (const name of databases) {
    try {
      psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } catch {
      // nothing more to do on the way out
    }
  }
  if (process.env.KEEP_FIXTURES) return;
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Undo what the fixtures made (processes, browsers, databases), newest first. */
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

/** Run `fn` at cleanup(). */
export function atCleanup(fn) {
  cleanups.push(fn);
}

export function tempDir(label) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `jility-web-${label}-`));
  tempDirs.push(dir);
  return dir;
}

/** PATH, a temp HOME; nothing of the developer's environment (tokens, JILITY_*). */
export function baseEnv(home) {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    LANG: 'C.UTF-8',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  };
}

export function run(command, args, cwd, env, input) {
  try {
    return execFileSync(command, args, { cwd, env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], timeout: 60_000 });
  } catch (err) {
    throw new Error(`${path.basename(command)} ${args.join(' ')} failed: ${err.stderr || err.message}`);
  }
}

// ---- PostgreSQL ------------------------------------------------------------------------------

export function psql(sql, url = DATABASE_URL) {
  return execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000, encoding: 'utf8' });
}

/** A fresh database (`jility_web_<random>`), dropped at cleanup(); its URL. */
export function pgDatabase() {
  const name = `jility_web_${crypto.randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${name}`);
  databases.add(name);
  cleanups.push(() => {
    psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    databases.delete(name);
  });
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

// ---- processes -------------------------------------------------------------------------------

/**
 * Start a process and wait for a stdout line matching `pattern`; {match, stop, output}.
 * stop() ends it (SIGTERM, then SIGKILL) and is registered with cleanup().
 */
export async function announced(label, command, args, options, pattern) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGTERM');
    });
  // Stopped at cleanup() even when it never announces itself.
  cleanups.push(stop);
  let output = '';
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not announce itself in 30 s:\n${output}`)), 30_000);
    // The announcement may come on stdout (`jility web`) or stderr (`jility serve`).
    const onData = (chunk) => {
      output += chunk.toString();
      const found = output.match(pattern);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before announcing itself:\n${output}`));
    });
  });
  child.removeAllListeners('exit');
  return { match, stop, output: () => output, child };
}

// ---- local mode ------------------------------------------------------------------------------

/** A project (`jility init --key KEY`, as HUMAN) in a temp dir: {dir, env}. */
export function localProject(key = 'WEB') {
  const tmp = tempDir('local');
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const dir = path.join(tmp, 'project');
  fs.mkdirSync(dir);
  const env = baseEnv(home);
  run(binary('jility'), ['--json', 'init', '--key', key], dir, { ...env, JILITY_ACTOR: HUMAN });
  return { dir, env, key };
}

/** `jility web --listen 127.0.0.1:0` in `project`, as HUMAN: {base, board, ticket(n), stop}. */
export async function localWeb(project) {
  const proc = await announced(
    'jility web',
    binary('jility'),
    ['web', '--listen', '127.0.0.1:0'],
    { cwd: project.dir, env: { ...project.env, JILITY_ACTOR: HUMAN } },
    /(http:\/\/[^\s/]+)/,
  );
  const base = proc.match[1];
  const ws = `${base}/w/local`;
  return {
    base,
    ws,
    board: `${ws}/board`,
    ticket: (key) => `${ws}/tickets/${encodeURIComponent(key)}`,
    stop: proc.stop,
  };
}

// ---- the MCP agent ---------------------------------------------------------------------------

/** An MCP client (the official TypeScript SDK) connected over `transport`; closed at cleanup(). */
export async function mcpClient(transport, name = 'jility-web-tests') {
  const client = new Client({ name, version: '0.0.0' });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return agentOf(client);
}

/** `jility --mcp-server` in `project` over stdio, as AGENT. */
export async function localAgent(project) {
  const transport = new StdioClientTransport({
    command: binary('jility'),
    args: ['--mcp-server'],
    cwd: project.dir,
    env: { ...project.env, JILITY_ACTOR: AGENT },
    stderr: 'pipe',
  });
  return mcpClient(transport);
}

/** A Streamable HTTP MCP client to `url` with a bearer token. */
export async function httpAgent(url, token) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  return mcpClient(transport);
}

/** The tool's answer, unwrapped: `data` of the envelope; throws with the error on failure. */
function unwrap(name, result) {
  let body = result.structuredContent;
  if (body === undefined) {
    const text = (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
    try {
      body = JSON.parse(text);
    } catch {
      body = { text };
    }
  }
  if (result.isError || body?.ok === false || body?.error) {
    const err = new Error(`${name}: ${JSON.stringify(body?.error ?? body)}`);
    err.tool = body?.error ?? body;
    throw err;
  }
  return body?.data ?? body;
}

function agentOf(client) {
  const call = async (name, args) => unwrap(name, await client.callTool({ name, arguments: args }));
  return {
    client,
    call,
    /** Create a ticket; its key (e.g. WEB-3). */
    async create(args) {
      const data = await call('jility_create_ticket', args);
      const key = data.number ?? data.ticket?.number ?? data.ticket_id ?? JSON.stringify(data).match(/"([A-Z]+-\d+)"/)?.[1];
      if (!key) throw new Error(`no ticket key in ${JSON.stringify(data)}`);
      return key;
    },
    async status(key, status) {
      return call('jility_update_status', { ticket_id: key, status });
    },
    async get(key) {
      const data = await call('jility_get_ticket', { ticket_id: key });
      return data.ticket ?? data;
    },
  };
}

// ---- the browser -----------------------------------------------------------------------------

/** Chromium (Debian's), headless; closed at cleanup(). */
export async function browser() {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; scripts/test does)`);
  }
  const b = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--disable-extensions'],
  });
  cleanups.push(() => b.close());
  return b;
}

/**
 * A page in a fresh context that records what should never happen: script errors, CSP
 * violations (through a `securitypolicyviolation` listener installed before any page
 * script), and console errors. `page.problems()` lists them.
 */
export async function newPage(b, options = {}) {
  const context = await b.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    // A 4xx/5xx answer is logged by the browser as "Failed to load resource" (a refused move,
    // the favicon): the tests check those answers themselves.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(`console: ${msg.text()}`);
  });
  await context.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample });
    });
  });
  page.problems = () => problems.slice();
  page.csp = () => page.evaluate(() => window.__csp ?? []);
  return page;
}

/** Wait until `fn` returns a truthy value (polling every `every` ms); the value. */
export async function until(what, fn, timeout = 10_000, every = 50) {
  const start = Date.now();
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() - start > timeout) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The card of `key` in the column of `status`. */
/** The UTC date `offset` days from today, `YYYY-MM-DD`. */
export function isoDay(offset) {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + offset);
  return d.toISOString().slice(0, 10);
}

export function cardIn(page, status, key) {
  return page.locator(`.column[data-status="${status}"] .card[data-ticket="${key}"]`);
}

/**
 * Wait until the page is quiet: the same #main (no live refresh swapped it) for `quiet` ms,
 * so that a drag does not start on an element a refresh is about to replace.
 */
export async function settled(page, quiet = 300) {
  await page.evaluate(
    (ms) =>
      new Promise((resolve) => {
        let main = document.getElementById('main');
        let since = performance.now();
        const tick = () => {
          const now = document.getElementById('main');
          if (now !== main) {
            main = now;
            since = performance.now();
          }
          if (performance.now() - since >= ms) resolve();
          else setTimeout(tick, 25);
        };
        tick();
      }),
    quiet,
  );
}

/** Wait until the board's live stream is connected. */
export async function waitLive(page) {
  await page.locator('#live[data-state="on"]').waitFor({ timeout: 10_000 });
}

/** Latency figures (live change → visible), printed as `# latency …` lines of the report. */
export const latencies = [];
export function recordLatency(label, ms) {
  latencies.push({ label, ms });
  // eslint-disable-next-line no-console
  console.log(`# latency ${label}: ${ms} ms`);
}

// ---- axe-core --------------------------------------------------------------------------------

const AXE_SOURCE = fs.readFileSync(path.join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on `page`. The page's CSP forbids inline script,
 * so axe's source is evaluated through the DevTools protocol (page.evaluate), which CSP does
 * not govern, not added as a <script>.
 */
export async function axeViolations(page) {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () =>
    // eslint-disable-next-line no-undef
    axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }),
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 3).join(' ')}`),
    }));
}

/** The page's controls that cannot be scrolled into view or are covered by something else
 * (a control inside a closed `<details>` is left out: its summary opens it), and how many
 * were checked. */
export async function reach(page) {
  return page.evaluate(async () => {
    const controls = Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex="0"]'));
    const out = [];
    let checked = 0;
    for (const el of controls) {
      // Controls in a closed <details> open with their summary: not in view on purpose.
      const closed = el.closest('details:not([open])');
      if (closed && el.tagName !== 'SUMMARY' && !el.matches('details > summary')) continue;
      if (el.classList.contains('skip')) continue; // the skip link shows on focus
      if (el.closest('.visually-hidden')) continue;
      checked += 1;
      el.scrollIntoView({ block: 'center', inline: 'center' });
      await new Promise((r) => requestAnimationFrame(() => r()));
      const r = el.getBoundingClientRect();
      const name = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className ? `.${String(el.className).split(' ').join('.')}` : ''} "${(el.innerText || el.getAttribute('aria-label') || el.name || '').slice(0, 30)}"`;
      if (r.width < 1 || r.height < 1) {
        out.push(`${name}: no size`);
        continue;
      }
      const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
      const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
      if (r.right <= 0 || r.left >= innerWidth || r.bottom <= 0 || r.top >= innerHeight) {
        out.push(`${name}: out of view at ${Math.round(r.left)},${Math.round(r.top)}`);
        continue;
      }
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(el === hit || el.contains(hit) || hit.contains(el) || (el.labels && Array.from(el.labels).some((l) => l.contains(hit))))) {
        out.push(`${name}: covered by ${hit ? hit.tagName.toLowerCase() + '.' + hit.className : 'nothing'}`);
      }
    }
    window.scrollTo(0, 0);
    return { unreachable: out, checked };
  });
}

/** A phone's page options (390×844, touch). */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** axe-core's serious and critical violations on each of `base` + `paths`, each in a fresh
 * page of `opener` (`(options) => page`, closed checked): `{}` when every page is clean. */
export async function axeEach(opener, base, paths) {
  const found = {};
  for (const path of paths) {
    const page = await opener({});
    const response = await page.goto(`${base}${path}`);
    assert.equal(response.status(), 200, `${path} is served`);
    await page.locator('main#main').waitFor();
    const violations = await axeViolations(page);
    if (violations.length) found[path] = violations;
    await closeChecked(page);
  }
  return found;
}

/** Each of `base` + `paths` at phone width, each in a fresh page of `opener` (closed
 * checked): the page does not scroll sideways and every control (at least `min`) can be
 * scrolled to and is not covered. */
export async function phoneEach(opener, base, paths, min = 1) {
  for (const path of paths) {
    const page = await opener(PHONE);
    await page.goto(`${base}${path}`);
    await page.locator('main#main').waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `${path}: the page does not scroll sideways (${width} px wide)`);
    const { unreachable, checked } = await reach(page);
    assert.ok(checked >= min, `${path}: ${checked} controls checked`);
    assert.deepEqual(unreachable, [], `${path}: every control can be scrolled to and is not covered`);
    await closeChecked(page);
  }
}

/** Close `page`'s context, then fail on any script error or CSP violation it saw. */
export async function closeChecked(page) {
  const problems = page.problems();
  const csp = await page.csp().catch(() => []);
  await page.context().close();
  assert.deepEqual(problems, [], 'no script errors on the page');
  assert.deepEqual(csp, [], 'no CSP violations');
}
