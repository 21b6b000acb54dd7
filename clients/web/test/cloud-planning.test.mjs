// Planning in the cloud web app (`jility serve` on a fresh PostgreSQL database) in Chromium:
// an owner drags a ticket into the next sprint and a member's planning page follows within a
// second; an epic's page follows a ticket an agent moves to done over MCP (Streamable HTTP,
// bearer token); the sprint's page shows the figures the tools give; a viewer sees the pages
// without a control that changes anything and a forged form is refused; another workspace's
// member gets 404 for every planning page; axe-core clean; phone width.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';
import { PEOPLE, cloud, signIn as cloudSignIn } from './cloud-fixture.mjs';

describe('cloud planning pages', () => {
  let server;
  let chrome;
  let agent;
  let epic;
  let first;
  let second;
  let loose;

  before(async () => {
    server = await cloud();
    chrome = await h.browser();
    agent = await h.httpAgent(server.mcp, server.token);
    epic = await agent.create({ title: 'Sign-in', kind: 'epic' });
    first = await agent.create({ title: 'Session table', story_points: 3, status: 'todo', epic_id: epic });
    second = await agent.create({ title: 'Session API', story_points: 5, status: 'todo', epic_id: epic });
    loose = await agent.create({ title: 'Audit log', story_points: 2 });
    await agent.call('jility_create_sprint', { name: 'Sprint 1', starts_on: h.isoDay(1), ends_on: h.isoDay(10), capacity_points: 8 });
  });
  after(h.cleanup);

  const pages = [];
  afterEach(async () => {
    while (pages.length) await h.closeChecked(pages.pop());
  });

  /** A signed-in page for `who` (closed, checked, after the test). */
  async function signIn(who, options = {}) {
    const page = await cloudSignIn(chrome, server.base, who, options);
    pages.push(page);
    return page;
  }

  async function open(page, path, kind) {
    const response = await page.goto(`${page.ws}${path}`);
    assert.equal(response.status(), 200, `${path} is served`);
    await page.locator(`main[data-page="${kind}"]`).waitFor();
    await h.waitLive(page);
    await h.settled(page);
  }

  const meter = (p) => p.locator('[data-meter] .capacity');
  const inSprint = (p, key) => p.locator(`.plan-sprint li.plan-card[data-ticket="${key}"]`);

  test('an owner drags a ticket into the sprint; a member’s planning page follows within a second', async () => {
    const ann = await signIn(PEOPLE.ann);
    const ben = await signIn(PEOPLE.ben);
    await open(ann, '/plan', 'plan');
    await open(ben, '/plan', 'plan');
    assert.match(await meter(ann).innerText(), /^0 of 8 points$/);

    const started = Date.now();
    await ann.locator(`.plan-backlog li[data-ticket="${first}"]`).dragTo(ann.locator('.plan-drop'));
    await inSprint(ann, first).waitFor({ timeout: 5_000 });
    await ben.locator('[data-meter] .capacity', { hasText: '3 of 8 points' }).waitFor({ timeout: 5_000 });
    await inSprint(ben, first).waitFor({ timeout: 5_000 });
    const followed = Date.now() - started;
    h.recordLatency(`cloud ann drags ${first} into Sprint 1 → ben's planning page`, followed);
    assert.ok(followed < 1_000, `the member's page followed within 1 s (${followed} ms)`);

    // The tools agree, and the ticket's change log names Ann.
    const listed = await agent.call('jility_list_tickets', { sprint: 'Sprint 1' });
    assert.deepEqual(listed.tickets.map((t) => t.number), [first]);
    const detail = await agent.call('jility_get_ticket', { ticket_id: first });
    assert.equal(detail.ticket.sprint, 'Sprint 1');
    const change = detail.recent_changes.find((c) => c.type === 'sprint_changed');
    assert.equal(change?.new_value, 'Sprint 1', JSON.stringify(detail.recent_changes));
    assert.equal(change?.changed_by, PEOPLE.ann.email, 'the change is Ann’s');
  });

  test('the epic page follows a ticket an agent moves to done over MCP, within a second', async () => {
    const ann = await signIn(PEOPLE.ann);
    await open(ann, `/epics/${epic}`, 'epic');
    assert.equal(await ann.locator('dd[data-progress]').getAttribute('data-progress'), '0');
    await agent.status(first, 'in_progress');
    const started = Date.now();
    await agent.status(first, 'done');
    await ann.locator('dd[data-progress="37"]').waitFor({ timeout: 5_000 });
    const followed = Date.now() - started;
    h.recordLatency(`cloud agent moves ${first} to done → the epic page`, followed);
    assert.ok(followed < 1_000, `the epic page followed within 1 s (${followed} ms)`);
    const got = await agent.call('jility_get_epic', { epic_id: epic });
    assert.equal(got.progress.points_done, 3);
    assert.equal(got.progress.points_total, 8);
  });

  test('the active sprint’s page shows the burndown jility_sprint_stats gives', async () => {
    await agent.call('jility_create_sprint', { name: 'Sprint 0', starts_on: h.isoDay(-2), ends_on: h.isoDay(5), capacity_points: 10 });
    await agent.call('jility_add_to_sprint', { sprint: 'Sprint 0', tickets: [second] });
    await agent.call('jility_start_sprint', { sprint: 'Sprint 0' });
    const stats = await agent.call('jility_sprint_stats', { sprint: 'active' });
    assert.equal(stats.burndown.length, 3, JSON.stringify(stats));
    const ann = await signIn(PEOPLE.ann);
    await open(ann, `/sprints/${stats.sprint.number}`, 'sprint');
    const rows = await ann.locator('table[data-chart="burndown"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent.trim())),
    );
    assert.deepEqual(rows, stats.burndown.map((d) => [d.date, String(d.remaining), d.ideal.toFixed(1)]), 'the table is the tool’s burndown');
    assert.equal(await ann.locator('figure.burndown svg circle.actual').count(), 3, 'a point a day');
  });

  test('a viewer sees the planning pages but no control that changes anything; a forged form is refused', async () => {
    const val = await signIn(PEOPLE.val);
    await open(val, '/plan', 'plan');
    assert.equal(await val.locator('main form').count(), 0, 'no Add or Remove forms');
    assert.equal(await val.locator('[draggable="true"]').count(), 0, 'nothing to drag');
    const status = await val.evaluate(async (key) => {
      const csrf = document.querySelector('meta[name="csrf-token"]').content;
      const base = document.querySelector('meta[name="base"]').content;
      const r = await fetch(`${base}/sprints/1/tickets`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ticket: key, _csrf: csrf }), redirect: 'manual' });
      return r.status;
    }, loose);
    assert.equal(status, 403, 'the server refuses a viewer’s change');
    const listed = await agent.call('jility_list_tickets', { sprint: 'Sprint 1' });
    assert.ok(!listed.tickets.some((t) => t.number === loose), 'nothing was added');
    for (const [path, kind] of [['/sprints', 'sprints'], ['/epics', 'epics'], [`/epics/${epic}`, 'epic']]) {
      await open(val, path, kind);
    }
  });

  test("another workspace's member gets 404 for every planning page and form", async () => {
    const zoe = await signIn(PEOPLE.zoe);
    assert.match(zoe.ws, /\/w\/bravo$/);
    const acme = zoe.ws.replace(/bravo$/, 'acme');
    for (const route of ['/plan', '/plan?sprint=1&propose=1', '/sprints', '/sprints/1', '/epics', `/epics/${epic}`, '/board?sprint=active']) {
      const response = await zoe.goto(`${acme}${route}`);
      assert.equal(response.status(), 404, `${route}: 404 for another workspace's member`);
      const html = await zoe.content();
      assert.doesNotMatch(html, /Sign-in|Session table|Sprint 1/, `${route} shows nothing of acme`);
    }
    await zoe.goto(`${zoe.ws}/plan`);
    const status = await zoe.evaluate(async ([url, key]) => {
      const csrf = document.querySelector('meta[name="csrf-token"]').content;
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ticket: key, _csrf: csrf }), redirect: 'manual' });
      return r.status;
    }, [`${acme}/sprints/1/tickets`, loose]);
    assert.equal(status, 404, "a form posted to another workspace's sprint is 404");
    const listed = await agent.call('jility_list_tickets', { sprint: 'Sprint 1' });
    assert.ok(!listed.tickets.some((t) => t.number === loose), 'nothing was added');
  });

  test('axe-core and phone width (390×844) on every planning page', async () => {
    const routes = ['/plan', '/plan?sprint=1&propose=1', '/sprints', '/sprints/1', '/epics', `/epics/${epic}`, '/board?sprint=active'];
    const ann = await signIn(PEOPLE.ann);
    // Ann's session in each fresh page.
    const storageState = await ann.context().storageState();
    const opener = (options) => h.newPage(chrome, { ...options, storageState });
    const found = await h.axeEach(opener, ann.ws, routes);
    assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
    await h.phoneEach(opener, ann.ws, routes, 5);
  });
});
