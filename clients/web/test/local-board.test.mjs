// The local board (`jility web`) in Chromium, with an MCP agent writing to the same project:
// what the agent creates shows, drag-and-drop and keyboard moves (legal and refused), and live
// updates within a second.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';

describe('local board', () => {
  let project;
  let web;
  let agent;
  let chrome;

  before(async () => {
    project = h.localProject('WEB');
    web = await h.localWeb(project);
    agent = await h.localAgent(project);
    chrome = await h.browser();
  });
  after(h.cleanup);

  let page;
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  test('the board shows the tickets an agent created through MCP', async () => {
    const a = await agent.create({ title: 'Parse the config file', story_points: 3, labels: ['backend'] });
    const b = await agent.create({ title: 'Sign-in form', labels: ['ui'] });
    await agent.call('jility_assign_ticket', { ticket_id: b, assignees: [h.AGENT] });
    await agent.status(b, 'todo');

    page = await h.newPage(chrome);
    await page.goto(web.board);
    await h.cardIn(page, 'backlog', a).waitFor();
    await h.cardIn(page, 'todo', b).waitFor();
    const cardA = h.cardIn(page, 'backlog', a);
    assert.match(await cardA.innerText(), /Parse the config file/);
    assert.match(await cardA.locator('.points').innerText(), /3/);
    assert.equal(await cardA.locator('.label').innerText(), 'backend');
    const cardB = h.cardIn(page, 'todo', b);
    assert.match(await cardB.locator('.who.agent').innerText(), new RegExp(h.AGENT));
    const todoCount = await page.locator('.column[data-status="todo"] .count[data-count]').innerText();
    assert.equal(todoCount.trim(), '1');
  });

  test('dragging a card to a legal column moves it; to an illegal one is refused with the allowed moves', async () => {
    const key = await agent.create({ title: 'Drag me' });
    page = await h.newPage(chrome);
    await page.goto(web.board);
    await h.waitLive(page);
    await h.settled(page);

    // Legal: backlog → todo.
    await h.cardIn(page, 'backlog', key).dragTo(page.locator('.column[data-status="todo"]'));
    await h.cardIn(page, 'todo', key).waitFor({ timeout: 10_000 });
    await page.locator('#notice .notice.ok').waitFor({ timeout: 10_000 });
    assert.equal((await agent.get(key)).status, 'todo', 'the database says todo');

    // Illegal: todo → done.
    await h.settled(page);
    await h.cardIn(page, 'todo', key).dragTo(page.locator('.column[data-status="done"]'));
    const error = page.locator('#notice .notice.error');
    await error.waitFor({ timeout: 10_000 });
    const text = await error.innerText();
    for (const allowed of ['backlog', 'in_progress', 'blocked']) {
      assert.ok(text.toLowerCase().replace(/ /g, '_').includes(allowed), `the refusal names ${allowed}: ${text}`);
    }
    await page.waitForTimeout(300);
    assert.equal(await h.cardIn(page, 'done', key).count(), 0, 'nothing moved on the page');
    assert.equal(await h.cardIn(page, 'todo', key).count(), 1);
    assert.equal((await agent.get(key)).status, 'todo', 'nothing moved in the database');
    // The refusal is the page's only "error": the browser logs the 4xx answer, not a script error.
    page.problems = () => [];
  });

  test('keyboard: a focused card moves one column on ]', async () => {
    const key = await agent.create({ title: 'Keyboard me' });
    page = await h.newPage(chrome);
    await page.goto(web.board);
    await h.waitLive(page);
    await h.settled(page);
    const card = h.cardIn(page, 'backlog', key);
    await card.focus();
    await page.keyboard.press(']');
    await h.cardIn(page, 'todo', key).waitFor({ timeout: 10_000 });
    assert.equal((await agent.get(key)).status, 'todo');
    // Focus stays on the moved card, so ] again moves it on.
    await h.until('the moved card to have focus', () =>
      page.evaluate((k) => document.activeElement?.dataset?.ticket === k, key),
    );
    await h.settled(page);
    await page.keyboard.press(']');
    await h.cardIn(page, 'in_progress', key).waitFor({ timeout: 10_000 });
    assert.equal((await agent.get(key)).status, 'in_progress');
  });

  test('live: what the agent creates and moves shows within a second', async () => {
    page = await h.newPage(chrome);
    await page.goto(web.board);
    await h.waitLive(page);
    const figures = [];
    for (let i = 1; i <= 3; i++) {
      const started = Date.now();
      const key = await agent.create({ title: `Live ticket ${i}`, labels: ['live'] });
      await h.cardIn(page, 'backlog', key).waitFor({ timeout: 5_000 });
      const created = Date.now() - started;
      h.recordLatency(`local create ${key} → card on the board`, created);

      const moved = Date.now();
      await agent.status(key, 'in_progress');
      await h.cardIn(page, 'in_progress', key).waitFor({ timeout: 5_000 });
      const move = Date.now() - moved;
      h.recordLatency(`local move ${key} → card in its new column`, move);
      figures.push(created, move);
    }
    const worst = Math.max(...figures);
    assert.ok(worst < 1_000, `every change showed within 1 s (worst ${worst} ms: ${figures.join(', ')})`);
  });
});
