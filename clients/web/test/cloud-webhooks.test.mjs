// Settings → Webhooks of the cloud web app (`jility serve` on a fresh PostgreSQL database,
// JILITY_WEBHOOKS_ALLOW_PRIVATE=1) in Chromium, with a receiver on loopback: an owner adds
// a webhook through the form and sees its secret once, sends a test event that reaches the
// receiver signed with that secret (Standard Webhooks, checked here with node:crypto), reads
// it in the delivery log and redelivers it; a member is refused the page; the pages are
// axe-core clean and usable at phone width (no sideways scroll, every control in reach).
//
// SCREENSHOTS=1 writes docs/screenshots/webhooks-settings.png (1280×800).

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PEOPLE, cloud, signIn as cloudSignIn } from './cloud-fixture.mjs';

/** An HTTP receiver on loopback that records what it gets and answers `200 ok`. */
async function receiver() {
  const got = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.atCleanup(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${server.address().port}/hook`, got };
}

/** Whether one of the delivery's signatures is `secret`'s, as Standard Webhooks says. */
function signedWith(secret, delivery) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.`;
  const mac = crypto.createHmac('sha256', key).update(signed).update(delivery.body).digest('base64');
  return delivery.headers['webhook-signature'].split(' ').includes(`v1,${mac}`);
}

describe('cloud webhook settings', () => {
  let server;
  let chrome;
  let hook;
  let webhookId;

  before(async () => {
    server = await cloud({ serverEnv: { JILITY_WEBHOOKS_ALLOW_PRIVATE: '1' } });
    chrome = await h.browser();
    hook = await receiver();
  });
  after(h.cleanup);

  const pages = [];
  afterEach(async () => {
    while (pages.length) await h.closeChecked(pages.pop());
  });

  async function signIn(who, options = {}) {
    const page = await cloudSignIn(chrome, server.base, who, options);
    pages.push(page);
    return page;
  }

  test('an owner adds a webhook, sees its secret once, and a test event reaches the receiver', async () => {
    const ann = await signIn(PEOPLE.ann);
    // Linked from the settings' navigation.
    await ann.goto(`${ann.ws}/settings`);
    await ann.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Webhooks' }).click();
    await ann.locator('main[data-settings="webhooks"]').waitFor();
    assert.match(await ann.locator('h1').innerText(), /Webhooks of acme/);
    assert.match(await ann.locator('main').innerText(), /No webhooks yet/);

    // The form: URL, two event types, a description.
    await ann.getByLabel('URL', { exact: true }).fill(hook.url);
    await ann.getByLabel('ticket.created').check();
    await ann.getByLabel('ticket.status_changed').check();
    await ann.getByLabel('Description (optional)').fill('Deploy bot');
    await ann.getByRole('button', { name: 'Add the webhook' }).click();
    const shown = ann.getByLabel('Signing secret');
    await shown.waitFor();
    const secret = await shown.inputValue();
    assert.match(secret, /^whsec_[A-Za-z0-9+/=]{40,}$/, 'the secret is shown');
    const notice = await ann.locator('#notice').innerText();
    assert.match(notice, /shown only this once/);
    assert.match(notice, /webhook-signature/);

    // Listed without it.
    await ann.goto(`${ann.ws}/settings/webhooks`);
    const row = ann.locator('tr[data-webhook]').filter({ hasText: hook.url });
    await row.waitFor();
    webhookId = await row.getAttribute('data-webhook');
    assert.ok(!(await ann.content()).includes(secret), 'the secret is not shown again');
    assert.match(await row.innerText(), /ticket\.created, ticket\.status_changed/);
    assert.match(await row.innerText(), /enabled/);

    // "Send a test event": queued, said so, and received signed with the secret.
    await row.getByRole('button', { name: /Send a test event/ }).click();
    await ann.waitForURL(/\?done=tested$/);
    assert.match(await ann.locator('#notice').innerText(), /test event .* is on its way/);
    const delivery = await h.until('the test event reaches the receiver', () => hook.got.find((d) => JSON.parse(d.body).type === 'webhook.test'));
    assert.ok(signedWith(secret, delivery), 'signed with the secret shown');
    assert.equal(JSON.parse(delivery.body).data.sent_by, PEOPLE.ann.email);

    if (process.env.SCREENSHOTS === '1') {
      await ann.goto(`${ann.ws}/settings/webhooks`);
      const out = path.join(h.REPO, 'docs', 'screenshots');
      fs.mkdirSync(out, { recursive: true });
      await ann.screenshot({ path: path.join(out, 'webhooks-settings.png'), fullPage: true });
    }

    // The delivery log: the test event delivered, the receiver's answer; redeliver it.
    await ann.goto(`${ann.ws}/settings/webhooks`);
    await ann.locator(`tr[data-webhook="${webhookId}"]`).getByRole('link', { name: /Delivery log/ }).click();
    await ann.locator('main[data-settings="webhook-log"]').waitFor();
    const logged = ann.locator('tr[data-delivery]').first();
    await h.until('the delivery shows as delivered', async () => {
      await ann.reload();
      return /delivered/.test(await logged.innerText());
    });
    const text = await logged.innerText();
    assert.match(text, /webhook\.test/);
    assert.match(text, /HTTP 200/);
    assert.equal(await logged.locator('pre.excerpt').innerText(), 'ok');
    const before = hook.got.length;
    await logged.getByRole('button', { name: /Redeliver/ }).click();
    await ann.waitForURL(/\?done=redelivered$/);
    const again = await h.until('the redelivery reaches the receiver', () => hook.got.length > before && hook.got[hook.got.length - 1]);
    assert.equal(again.headers['webhook-id'], delivery.headers['webhook-id'], 'the same message');
  });

  test('a member is refused the page', async () => {
    const ben = await signIn(PEOPLE.ben);
    const response = await ben.goto(`${ben.ws}/settings/webhooks`);
    assert.equal(response.status(), 403);
    assert.doesNotMatch(await ben.content(), /Add the webhook/);
  });

  test('axe-core: no serious or critical violations on the webhook pages', async () => {
    assert.ok(webhookId, 'the first test made a webhook');
    const ann = await signIn(PEOPLE.ann);
    const violations = {};
    for (const route of ['/settings/webhooks', `/settings/webhooks/${webhookId}`]) {
      const response = await ann.goto(`${ann.ws}${route}`);
      assert.equal(response.status(), 200, `${route} is served`);
      const seen = await h.axeViolations(ann);
      if (seen.length) violations[route] = seen;
    }
    // A refused form, with its error notice.
    await ann.goto(`${ann.ws}/settings/webhooks`);
    await ann.getByLabel('URL', { exact: true }).fill('http://10.0.0.1/x');
    await ann.getByRole('button', { name: 'Add the webhook' }).click();
    await ann.locator('#notice .notice.error').waitFor();
    assert.match(await ann.locator('#notice').innerText(), /must be https/);
    assert.equal(await ann.getByLabel('URL', { exact: true }).inputValue(), 'http://10.0.0.1/x', 'what was typed is kept');
    const seen = await h.axeViolations(ann);
    if (seen.length) violations['refused form'] = seen;
    if (Object.keys(violations).length) console.log(`# axe violations:\n${JSON.stringify(violations, null, 2)}`);
    assert.deepEqual(violations, {}, 'no serious or critical axe violations');
  });

  test('phone width (390×844): the webhook pages do not scroll sideways and keep every control in reach', async () => {
    assert.ok(webhookId, 'the first test made a webhook');
    const ann = await signIn(PEOPLE.ann, h.PHONE);
    for (const route of ['/settings/webhooks', `/settings/webhooks/${webhookId}`]) {
      await ann.goto(`${ann.ws}${route}`);
      await ann.locator('main#main').waitFor();
      const width = await ann.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 390, `${route}: the page does not scroll sideways (${width} px wide)`);
      const { unreachable, checked } = await h.reach(ann);
      assert.ok(checked >= 5, `${route}: ${checked} controls checked`);
      assert.deepEqual(unreachable, [], `${route}: every control can be scrolled to and is not covered`);
    }
    // "Send a test event" works at phone width too.
    await ann.goto(`${ann.ws}/settings/webhooks`);
    const count = hook.got.length;
    await ann.locator(`tr[data-webhook="${webhookId}"]`).getByRole('button', { name: /Send a test event/ }).click();
    await ann.waitForURL(/\?done=tested$/);
    await h.until('the second test event reaches the receiver', () => hook.got.length > count);
  });
});
