// Sprint history and a sprint's page in Chromium: the burndown's SVG and its table show the
// numbers jility_sprint_stats gives, and follow an agent's move within a second; the capacity
// meter turns to "over capacity"; the velocity chart and its table after a completion;
// axe-core clean; phone width (390×844) with every control in reach.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';

describe('local sprint pages', () => {
  let web;
  let agent;
  let chrome;
  let small;
  let large;
  let outside;

  before(async () => {
    const project = h.localProject('SPR');
    web = await h.localWeb(project);
    agent = await h.localAgent(project);
    chrome = await h.browser();
    small = await agent.create({ title: 'Session table', story_points: 3, status: 'todo' });
    large = await agent.create({ title: 'Session API', story_points: 5, status: 'todo' });
    outside = await agent.create({ title: 'Not this sprint', story_points: 2, status: 'todo' });
    await agent.call('jility_create_sprint', { name: 'Sprint 1', goal: 'People can sign in', starts_on: h.isoDay(-2), ends_on: h.isoDay(7), capacity_points: 10 });
    await agent.call('jility_add_to_sprint', { sprint: 'Sprint 1', tickets: [small, large] });
    await agent.call('jility_start_sprint', { sprint: 'Sprint 1' });
  });
  after(h.cleanup);

  let page;
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  /** The burndown table's rows: [date, remaining, ideal]. */
  async function rows(p) {
    return p.locator('table[data-chart="burndown"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent.trim())),
    );
  }

  function expected(stats) {
    return stats.burndown.map((d) => [d.date, String(d.remaining), d.ideal.toFixed(1)]);
  }

  test("a sprint's page shows the tool's burndown and follows an agent's move within a second", async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/sprints/1`);
    await page.locator('main[data-page="sprint"][data-sprint="1"]').waitFor();
    await h.waitLive(page);
    const stats = await agent.call('jility_sprint_stats', { sprint: 'Sprint 1' });
    assert.equal(stats.burndown.length, 3, JSON.stringify(stats));
    assert.deepEqual(await rows(page), expected(stats), 'the table is the tool’s burndown');
    assert.equal(await page.locator('figure.burndown svg circle.actual').count(), 3, 'a point a day');
    assert.match(await page.locator('figure.burndown svg').getAttribute('aria-label'), /8 at its end/);
    assert.equal(await page.locator('dd[data-committed]').innerText(), '8 points');

    await agent.status(small, 'in_progress');
    const started = Date.now();
    await agent.status(small, 'done');
    await page.locator('dd[data-remaining]', { hasText: '5 points' }).waitFor({ timeout: 1_000 });
    h.recordLatency('sprint page after a ticket is done', Date.now() - started);
    const after = await agent.call('jility_sprint_stats', { sprint: 'Sprint 1' });
    assert.deepEqual(await rows(page), expected(after));
    assert.equal((await rows(page)).at(-1)[1], '5');
    assert.equal(await page.locator('dd[data-completed]').innerText(), '3 points');
  });

  test('the capacity meter says when the sprint is over capacity', async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/sprints/1`);
    await page.locator('main[data-page="sprint"]').waitFor();
    await h.waitLive(page);
    assert.equal(await page.locator('.capacity').getAttribute('data-over'), 'false');
    const extra = await agent.create({ title: 'Password reset', story_points: 8, status: 'todo' });
    await agent.call('jility_add_to_sprint', { sprint: 'Sprint 1', tickets: [extra] });
    await page.locator('.capacity.over[data-over="true"]').waitFor({ timeout: 2_000 });
    assert.match(await page.locator('.capacity').innerText(), /16 of 10 points — over capacity/);
    assert.equal(await page.locator(`li[data-ticket="${extra}"]`).count(), 1);
  });

  test("the sprint's board: its tickets only, under a header of its figures", async () => {
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/sprints/1`);
    await page.locator('a[data-sprint-board]').click();
    await page.locator('main[data-page="board"] section.sprint-header[data-sprint="1"]').waitFor();
    assert.equal(await page.locator('.sprint-header [data-committed]').innerText(), '8 committed');
    assert.equal(await page.locator('.sprint-header [data-completed]').innerText(), '3 completed');
    assert.equal(await h.cardIn(page, 'done', small).count(), 1);
    assert.equal(await h.cardIn(page, 'todo', large).count(), 1);
    assert.equal(await page.locator(`[data-ticket="${outside}"]`).count(), 0, 'a ticket of no sprint is not on it');
    assert.equal(await page.locator('#f-sprint').inputValue(), '1');
    // `active` names the same sprint.
    await page.goto(`${web.ws}/board?sprint=active`);
    await page.locator('section.sprint-header[data-sprint="1"]').waitFor();
  });

  test('sprint history: the velocity chart and its table after a completion', async () => {
    await agent.call('jility_create_sprint', { name: 'Sprint 2', starts_on: h.isoDay(8), ends_on: h.isoDay(17) });
    await agent.call('jility_complete_sprint', { sprint: 'Sprint 1', carry_over_to: 'Sprint 2' });
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/sprints`);
    await page.locator('main[data-page="sprints"]').waitFor();
    assert.equal(await page.locator('tr[data-sprint="1"] td[data-points]').innerText(), '3 of 3');
    assert.equal(await page.locator('tr[data-sprint="2"] td[data-points]').innerText(), '0 of 13');
    assert.equal(await page.locator(`[data-ticket="${outside}"]`).count(), 0);
    const velocity = await page.locator('table[data-chart="velocity"] tbody tr').evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent.trim())),
    );
    assert.deepEqual(velocity, [['Sprint 1', '3']]);
    assert.equal(await page.locator('figure.velocity svg rect.bar').count(), 1);
    await page.locator('tr[data-sprint="1"] a').click();
    await page.locator('main[data-page="sprint"][data-sprint="1"]').waitFor();
    assert.match(await page.locator('[data-carried]').innerText(), /Carried over: .*13 points/);
  });

  test('axe-core finds nothing serious on the sprint pages', async () => {
    const found = await h.axeEach((options) => h.newPage(chrome, options), web.ws, ['/sprints', '/sprints/1', '/sprints/2', '/board?sprint=2']);
    assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
  });

  test('phone width (390×844): the sprint pages fit and every control is in reach', async () => {
    await h.phoneEach((options) => h.newPage(chrome, options), web.ws, ['/sprints', '/sprints/1', '/board?sprint=2'], 5);
  });
});
