// The planning page in Chromium: the backlog beside the next sprint; a ticket dragged into the
// sprint moves the capacity meter, which turns red past capacity; the planner's proposal one
// click away and added with one button; Add and Remove buttons without dragging; the tools
// agree; axe-core clean; phone width (390×844) with every control in reach.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';

describe('local planning page', () => {
  let web;
  let agent;
  let chrome;
  let a;
  let b;
  let c;

  before(async () => {
    const project = h.localProject('PLN');
    web = await h.localWeb(project);
    agent = await h.localAgent(project);
    chrome = await h.browser();
    a = await agent.create({ title: 'Session table', story_points: 3, status: 'todo' });
    b = await agent.create({ title: 'Session API', story_points: 5, status: 'todo' });
    c = await agent.create({ title: 'Audit log', story_points: 4 });
    await agent.call('jility_create_sprint', { name: 'Sprint 1', starts_on: h.isoDay(1), ends_on: h.isoDay(10), capacity_points: 8 });
  });
  after(h.cleanup);

  let page;
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  const meter = (p) => p.locator('[data-meter] .capacity');
  const inSprint = (p, key) => p.locator(`.plan-sprint li.plan-card[data-ticket="${key}"]`);

  test('drag a ticket into the sprint, take the proposal, pass the capacity, and back', async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/plan`);
    await page.locator('main[data-page="plan"]').waitFor();
    await h.waitLive(page);
    assert.match(await meter(page).innerText(), /^0 of 8 points$/);
    for (const key of [a, b, c]) {
      assert.equal(await page.locator(`.plan-backlog li[data-ticket="${key}"]`).count(), 1, `${key} waits in the backlog`);
    }

    // Drag a (3 points) onto the sprint.
    await h.settled(page);
    await page.locator(`.plan-backlog li[data-ticket="${a}"]`).dragTo(page.locator('.plan-drop'));
    await inSprint(page, a).waitFor({ timeout: 5_000 });
    await page.locator('[data-meter] .capacity', { hasText: '3 of 8 points' }).waitFor({ timeout: 5_000 });
    assert.equal(await meter(page).getAttribute('data-over'), 'false');

    // The proposal: b (todo, 5) fits; c (backlog, 4) does not.
    await page.locator('a[data-propose]').click();
    await page.locator('[data-proposal]').waitFor();
    const proposed = await page.locator('[data-proposal] ol li').evaluateAll((lis) => lis.map((li) => li.dataset.ticket));
    assert.deepEqual(proposed, [b]);
    const plan = await agent.call('jility_plan_sprint', { sprint: 'Sprint 1' });
    assert.deepEqual(plan.tickets, proposed, 'the page shows the tool’s proposal');
    await page.locator('button[data-apply]').click();
    await inSprint(page, b).waitFor({ timeout: 5_000 });
    await page.locator('[data-meter] .capacity', { hasText: '8 of 8 points' }).waitFor({ timeout: 5_000 });

    // Past capacity: red, and said in words.
    await page.getByRole('button', { name: `Add ${c} to Sprint 1` }).click();
    await inSprint(page, c).waitFor({ timeout: 5_000 });
    await page.locator('[data-meter] .capacity.over[data-over="true"]').waitFor({ timeout: 5_000 });
    assert.match(await meter(page).innerText(), /12 of 8 points — over capacity/);
    // Read on the meter that is on the page (a live refresh may replace it meanwhile: a
    // replaced element has no computed style).
    const color = await page
      .waitForFunction(() => {
        const el = document.querySelector('[data-meter] .capacity.over');
        return el && el.isConnected && getComputedStyle(el).color;
      })
      .then((handle) => handle.jsonValue());
    assert.equal(color, 'rgb(138, 28, 28)', 'the meter’s text turns red');

    // And back.
    await page.getByRole('button', { name: `Remove ${c} from Sprint 1` }).click();
    await page.locator(`.plan-backlog li[data-ticket="${c}"]`).waitFor({ timeout: 5_000 });
    await page.locator('[data-meter] .capacity', { hasText: '8 of 8 points' }).waitFor({ timeout: 5_000 });
    const listed = await agent.call('jility_list_tickets', { sprint: 'Sprint 1' });
    assert.deepEqual(listed.tickets.map((t) => t.number).sort(), [a, b].sort(), 'the tools agree');
  });

  test('axe-core finds nothing serious on the planning page, with and without a proposal', async () => {
    const found = await h.axeEach((options) => h.newPage(chrome, options), web.ws, ['/plan', '/plan?sprint=1&propose=1']);
    assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
  });

  test('phone width (390×844): the planning page fits and every control is in reach', async () => {
    await h.phoneEach((options) => h.newPage(chrome, options), web.ws, ['/plan', '/plan?sprint=1&propose=1'], 5);
  });
});
