// OAuth 2.1 on `jility serve` with the official TypeScript SDK's OAuth client (an
// `OAuthClientProvider`, as Claude Code's): discovery from the 401 at /mcp, dynamic
// registration, the person signing in and approving some scopes in Chromium, the code
// exchanged with PKCE; then `tools/list` shows only what was granted and calls work; the
// SDK refreshes an expired token by itself (its session survives); a revoked grant gets 401.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import * as h from './harness.mjs';
import { PASSWORD, PEOPLE, cloud } from './cloud-fixture.mjs';

/** Access tokens of this test's server last this long (the SDK must refresh them). */
const ACCESS_SECS = 4;

/** A loopback server that receives the authorization response, as a native app's does. */
async function callbackServer() {
  const answers = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname === '/callback') answers.push(url); // not the page's /favicon.ico
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>Done</title><p>You may close this window.</p>');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.atCleanup(() => new Promise((resolve) => server.close(resolve)));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/callback`, answers };
}

/** A self-signed certificate for 127.0.0.1 (openssl): {key, cert, file}. */
function selfSigned() {
  const dir = h.tempDir('cimd-cert');
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:FALSE', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert), file: cert };
}

/** An HTTPS server on loopback publishing a client's metadata document; its URL. */
async function documentServer(tls, redirect) {
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const url = `https://127.0.0.1:${server.address().port}/oauth/client.json`;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      client_id: url,
      client_name: 'SDK document client',
      redirect_uris: [redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.atCleanup(() => new Promise((resolve) => server.close(resolve)));
  return `https://127.0.0.1:${server.address().port}/oauth/client.json`;
}

/** The SDK's client-side store of one MCP client: registration, tokens, PKCE verifier. */
class Provider {
  constructor(redirect, clientMetadataUrl) {
    this.redirect = redirect;
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
    this.authorizationUrl = null;
    this.saved = {};
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: 'SDK test client',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

describe('OAuth with the TypeScript SDK', () => {
  let server;
  let chrome;
  let agent;

  let tls;

  before(async () => {
    tls = selfSigned();
    // The operator lets clients on their own network (loopback here, its own CA) describe
    // themselves with metadata documents.
    server = await cloud({
      serverEnv: {
        JILITY_OAUTH_ACCESS_SECS: String(ACCESS_SECS),
        JILITY_OAUTH_ALLOW_PRIVATE_CLIENTS: '1',
        JILITY_OAUTH_CLIENT_CA: tls.file,
      },
    });
    chrome = await h.browser();
    agent = await h.httpAgent(server.mcp, server.token);
  });
  after(h.cleanup);

  /** Sign `who` in on the authorization page in Chromium and decide; the client's answer. */
  async function approve(url, who, callback, { untick = [], decision = 'approve', name = /SDK test client/ } = {}) {
    const page = await h.newPage(chrome);
    try {
      const before = callback.answers.length;
      await page.goto(url.href);
      await page.locator('main[data-page="login"]').waitFor({ timeout: 10_000 }).catch(async (err) => {
        throw new Error(`${err.message}: the page says ${(await page.locator('body').innerText()).slice(0, 400)}`);
      });
      await page.getByLabel(/email/i).fill(who.email);
      await page.getByLabel(/password/i).fill(PASSWORD);
      await page.locator('main form button[type=submit]').first().click();
      await page.locator('main[data-page="authorize"]').waitFor();
      assert.match(await page.locator('main').innerText(), name);
      for (const scope of untick) await page.locator(`#scope-${scope.replace(':', '-')}`).uncheck();
      await page.locator(`button[value=${decision}]`).click();
      await h.until('the browser back at the client', async () => callback.answers.length > before).catch(async (err) => {
        throw new Error(`${err.message}; the page is at ${page.url()}: ${(await page.locator('body').innerText()).slice(0, 300)}; problems ${JSON.stringify(page.problems())}; csp ${JSON.stringify(await page.csp())}`);
      });
      assert.deepEqual(page.problems(), [], 'no script errors on the sign-in and consent pages');
      assert.deepEqual(await page.csp(), [], 'no CSP violation (the form may go on to the client)');
      return callback.answers.at(-1);
    } finally {
      await page.context().close();
    }
  }

  test('discovery, registration, consent in Chromium, PKCE: the client gets only what was approved, refreshes, and stops when revoked', async () => {
    const callback = await callbackServer();
    const provider = new Provider(callback.url);
    const url = new URL(server.mcp);
    const first = new Client({ name: 'oauth-test', version: '0' });
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })), UnauthorizedError);
    assert.ok(provider.saved.client?.client_id, 'registered dynamically');
    assert.ok(provider.authorizationUrl, 'sent to the authorization page');
    assert.equal(provider.authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

    // Ben (a member) approves reading and writing, not commenting.
    const answer = await approve(provider.authorizationUrl, PEOPLE.ben, callback, { untick: ['comments:write'] });
    assert.equal(answer.searchParams.get('iss'), new URL(server.base).origin);
    const code = answer.searchParams.get('code');
    assert.ok(code, `a code in ${answer}`);
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(code);
    assert.equal(provider.saved.tokens.scope, 'tickets:read tickets:write');

    const client = new Client({ name: 'oauth-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    h.atCleanup(() => client.close());
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('jility_create_ticket'), `${tools}`);
    assert.ok(!tools.includes('jility_add_comment'), `commenting was not approved: ${tools}`);
    const made = await client.callTool({ name: 'jility_create_ticket', arguments: { title: 'Made through OAuth' } });
    assert.ok(!made.isError, JSON.stringify(made));
    const key = made.structuredContent.data.number ?? made.structuredContent.data.ticket?.number;
    assert.equal((await agent.get(key)).title, 'Made through OAuth');

    // The access token expires: the SDK refreshes it by itself, in the same session.
    const firstToken = provider.saved.tokens.access_token;
    assert.equal(provider.saved.tokens.expires_in, ACCESS_SECS);
    await new Promise((resolve) => setTimeout(resolve, ACCESS_SECS * 1000 + 500));
    const read = await client.callTool({ name: 'jility_get_ticket', arguments: { ticket_id: key } });
    assert.ok(!read.isError, JSON.stringify(read));
    assert.notEqual(provider.saved.tokens.access_token, firstToken, 'a new access token');

    // Ben revokes the client on the settings page: its next call is refused.
    const page = await h.newPage(chrome);
    h.atCleanup(() => page.context().close());
    await page.goto(`${server.base}/login`);
    await page.getByLabel(/email/i).fill(PEOPLE.ben.email);
    await page.getByLabel(/password/i).fill(PASSWORD);
    await page.locator('main form button[type=submit]').first().click();
    await page.waitForURL(/\/w\/acme\//);
    await page.goto(`${server.base}/w/acme/settings/clients`);
    assert.match(await page.locator('main').innerText(), /SDK test client/);
    await page.locator('table.clients button[type=submit]').first().click();
    await h.until('the client gone from the page', async () => !/SDK test client/.test(await page.locator('main').innerText()));
    const stale = { ...provider.saved.tokens };
    const refused = await fetch(server.mcp, {
      method: 'POST',
      headers: { authorization: `Bearer ${stale.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate'), /resource_metadata=/);
  });

  test('a denied consent gives the client an error and no code', async () => {
    const callback = await callbackServer();
    const provider = new Provider(callback.url);
    const client = new Client({ name: 'oauth-test', version: '0' });
    await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(server.mcp), { authProvider: provider })), UnauthorizedError);
    const answer = await approve(provider.authorizationUrl, PEOPLE.val, callback, { decision: 'deny' });
    assert.equal(answer.searchParams.get('error'), 'access_denied');
    assert.equal(answer.searchParams.get('code'), null);
  });

  test('a client known by its Client ID Metadata Document (no registration) signs in and works', async () => {
    const callback = await callbackServer();
    const documentUrl = await documentServer(tls, callback.url);
    const provider = new Provider(callback.url, documentUrl);
    const url = new URL(server.mcp);
    const first = new Client({ name: 'oauth-test', version: '0' });
    await assert.rejects(first.connect(new StreamableHTTPClientTransport(url, { authProvider: provider })), UnauthorizedError);
    assert.equal(provider.authorizationUrl.searchParams.get('client_id'), documentUrl, 'the document URL is the client_id');
    const answer = await approve(provider.authorizationUrl, PEOPLE.ben, callback, { name: /SDK document client/ });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(answer.searchParams.get('code'));
    const client = new Client({ name: 'oauth-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    h.atCleanup(() => client.close());
    const listed = await client.callTool({ name: 'jility_list_tickets', arguments: {} });
    assert.ok(!listed.isError, JSON.stringify(listed));
  });
});
