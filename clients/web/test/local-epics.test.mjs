// The epic list and an epic's page in Chromium: progress bars with their numbers, the
// critical path, the tickets by status; the page follows a ticket an agent moves to done over
// MCP within a second; axe-core clean; phone width (390×844) with every control in reach.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';

describe('local epics pages', () => {
  let project;
  let web;
  let agent;
  let chrome;
  let epic;
  let first;
  let second;

  before(async () => {
    project = h.localProject('EPC');
    web = await h.localWeb(project);
    agent = await h.localAgent(project);
    chrome = await h.browser();
    epic = await agent.create({ title: 'Sign-in', kind: 'epic' });
    first = await agent.create({ title: 'Session table', story_points: 3, status: 'todo', epic_id: epic });
    second = await agent.create({ title: 'Session API', story_points: 5, status: 'todo', epic_id: epic });
    await agent.call('jility_add_dependency', { ticket_id: second, depends_on: first });
  });
  after(h.cleanup);

  let page;
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  test('the epic list shows each epic with its progress', async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/epics`);
    const row = page.locator(`tr[data-epic="${epic}"]`);
    await row.waitFor();
    assert.equal(await row.locator('td[data-points]').innerText(), '0 of 8');
    assert.equal(await row.locator('td[data-count]').innerText(), '0 of 2');
    assert.equal(await row.locator('td[data-blocked]').innerText(), '1', 'the second waits on the first');
    assert.match(await row.locator('.progress-text').innerText(), /0% of points/);
    await row.locator('a', { hasText: 'Sign-in' }).click();
    await page.locator(`main[data-page="epic"][data-epic="${epic}"]`).waitFor();
  });

  test("an epic's page follows a ticket an agent moves to done, within a second", async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/epics/${epic}`);
    await page.locator('main[data-page="epic"]').waitFor();
    await h.waitLive(page);
    const path = await page.locator('ol.critical-path li').evaluateAll((items) => items.map((li) => li.dataset.ticket));
    assert.deepEqual(path, [first, second], 'the critical path, first step first');
    assert.match(await page.locator('ol.critical-path li').nth(1).innerText(), new RegExp(`waits on ${first}`));
    assert.equal(await page.locator('dd[data-progress]').getAttribute('data-progress'), '0');

    await agent.status(first, 'in_progress');
    const started = Date.now();
    await agent.status(first, 'done');
    await page.locator('dd[data-progress="37"]').waitFor({ timeout: 1_000 });
    h.recordLatency('epic page after a ticket is done', Date.now() - started);
    assert.equal(await page.locator('dd[data-points]').innerText(), '3 of 8 done');
    assert.match(await page.locator('.progress-text').first().innerText(), /37% of points/);
    const path2 = await page.locator('ol.critical-path li').evaluateAll((items) => items.map((li) => li.dataset.ticket));
    assert.deepEqual(path2, [second], 'a done ticket leaves the path');
    assert.equal(await page.locator(`ul.epic-tickets li[data-ticket="${first}"]`).count(), 1, 'it is listed under Done');
  });

  test('a ticket that is no epic is a clear page, not a crash', async () => {
    page = await h.newPage(chrome);
    const response = await page.goto(`${web.ws}/epics/${first}`);
    assert.equal(response.status(), 400);
    assert.match(await page.locator('body').innerText(), /is a ticket, not an epic/);
  });

  test('axe-core finds nothing serious on the epic pages', async () => {
    const found = await h.axeEach((options) => h.newPage(chrome, options), web.ws, ['/epics', `/epics/${epic}`]);
    assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
  });

  test('phone width (390×844): the epic pages fit and every control is in reach', async () => {
    await h.phoneEach((options) => h.newPage(chrome, options), web.ws, ['/epics', `/epics/${epic}`], 5);
  });
});
