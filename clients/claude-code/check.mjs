// Claude Code's own CLI against `jility serve` (a fresh PostgreSQL database, a workspace):
// `claude mcp add --transport http jility URL` with a throwaway HOME, then `claude mcp list`
// must report that the server needs authentication — Claude Code found the OAuth metadata
// from the 401 and registered itself — and not a failed connection or registration. The
// registration it made is then in the server's database.
//
// Run by scripts/test with Node 22 (Claude Code needs it): `node check.mjs`.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(here, '..', '..');
const BIN_DIR = path.resolve(process.env.MCP_BIN_DIR ?? path.join(REPO, 'target', 'debug'));
const DATABASE_URL = process.env.JILITY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const CLAUDE = path.join(here, 'node_modules', '.bin', 'claude');

const psql = (sql, url = DATABASE_URL) =>
  execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qtAc', sql], { encoding: 'utf8', timeout: 60_000 });

const cleanups = [];
async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'claude-code-check-'));
  cleanups.push(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const name = `jility_cc_${crypto.randomBytes(6).toString('hex')}`;
  psql(`CREATE DATABASE ${name}`);
  cleanups.push(() => psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  const database = url.toString();
  const jility = path.join(BIN_DIR, 'jility');
  const env = { PATH: process.env.PATH, HOME: tmp, RUST_LOG: 'warn' };
  execFileSync(jility, ['admin', 'create-workspace', 'acme', '--database-url', database, '--json'], { env, encoding: 'utf8' });

  const server = spawn(jility, ['serve', '--listen', '127.0.0.1:0', '--database-url', database], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  cleanups.push(() => server.kill('SIGTERM'));
  const mcp = await new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`jility serve did not start: ${seen}`)), 30_000);
    server.stderr.on('data', (chunk) => {
      seen += chunk;
      const match = seen.match(/MCP at (http:\/\/\S+\/mcp)/);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`jility serve exited (${code}): ${seen}`)));
  });

  // Claude Code with a home of its own: no account, no settings, no traffic it can skip.
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home);
  const claudeEnv = {
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`,
    HOME: home,
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
  const claude = (args) =>
    execFileSync(CLAUDE, args, { cwd: home, env: claudeEnv, encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const added = claude(['mcp', 'add', '--transport', 'http', 'jility', mcp]);
  assert.match(added, /Added HTTP MCP server jility/, added);
  const listed = claude(['mcp', 'list']);
  console.log(listed.trim());
  const line = listed.split('\n').find((l) => l.startsWith('jility:')) ?? '';
  assert.match(line, /needs authentication/i, `claude mcp list: ${listed}`);
  assert.doesNotMatch(line, /failed|rejected/i, `claude mcp list: ${listed}`);
  console.log('ok: Claude Code sees a server that wants a sign-in, not a failed registration');
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  for (const clean of cleanups.reverse()) {
    try {
      await clean();
    } catch (err) {
      console.error(`cleanup: ${err.message}`);
    }
  }
}
