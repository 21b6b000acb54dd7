// The cloud fixture of the browser tests: a fresh PostgreSQL database, workspaces `acme` and
// `bravo`, people of every role made with `jility admin`, and `jility serve` on it.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import * as h from './harness.mjs';

export const SERVE_ANNOUNCE = /serving the API at (http:\/\/\S+)\/api\/v1 and MCP at (http:\/\/\S+\/mcp)/;
export const PASSWORD = 'correct horse battery staple';

export const PEOPLE = {
  ann: { email: 'ann@acme.test', name: 'Ann Owner', workspace: 'acme', role: 'owner' },
  ben: { email: 'ben@acme.test', name: 'Ben Member', workspace: 'acme', role: 'member' },
  val: { email: 'val@acme.test', name: 'Val Viewer', workspace: 'acme', role: 'viewer' },
  zoe: { email: 'zoe@bravo.test', name: 'Zoe Bravo', workspace: 'bravo', role: 'owner' },
};

/** The cloud fixture: database, workspaces, people, `jility serve` (with `serverEnv` too). */
export async function cloud({ serverEnv = {} } = {}) {
  const tmp = h.tempDir('cloud');
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  const env = h.baseEnv(home);
  const database = h.pgDatabase();
  const jility = h.binary('jility');
  const admin = (args, input) => h.run(jility, ['admin', ...args, '--database-url', database], tmp, env, input);
  const acme = JSON.parse(admin(['create-workspace', 'acme', '--key', 'API', '--json']));
  JSON.parse(admin(['create-workspace', 'bravo', '--key', 'BRV', '--json']));
  for (const who of Object.values(PEOPLE)) {
    admin(['create-user', '--email', who.email, '--name', who.name, '--password-stdin'], `${PASSWORD}\n`);
    admin(['add-member', '--workspace', who.workspace, '--email', who.email, '--role', who.role]);
  }
  const proc = await h.announced(
    'jility serve',
    jility,
    ['serve', '--listen', '127.0.0.1:0', '--database-url', database, '--rate-limit', '100000'],
    { cwd: tmp, env: { ...env, ...serverEnv } },
    SERVE_ANNOUNCE,
  );
  const [, base, mcp] = proc.match;
  const login = await fetch(`${base}/login`);
  assert.equal(login.status, 200, '`jility serve` serves its sign-in page');
  assert.match(await login.text(), /data-page="login"/);
  return { base, mcp, token: acme.token, admin, database };
}


/**
 * A page of `chrome` signed in as `who` through the sign-in page (a fresh context: their own
 * cookies), with `page.ws` its workspace's base URL; `options` go to the browser context.
 */
export async function signIn(chrome, base, who, options = {}) {
  const page = await h.newPage(chrome, options);
  await page.goto(`${base}/login`);
  await page.locator('main[data-page="login"]').waitFor();
  await page.getByLabel(/email/i).fill(who.email);
  await page.getByLabel(/password/i).fill(PASSWORD);
  await Promise.all([page.waitForURL(/\/w\/[^/]+\//, { timeout: 10_000 }), page.locator('main form button[type=submit]').first().click()]);
  page.ws = page.url().match(/^(.*\/w\/[^/]+)\//)[1];
  return page;
}
