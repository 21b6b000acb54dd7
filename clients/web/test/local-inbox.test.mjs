// The inbox in Chromium (local mode): the header's unread count changes live when an agent
// mentions the person; the inbox page lists who did what; opening an entry marks it read and
// goes to its ticket; "Mark all read"; the watch button on a ticket page; axe clean and
// usable at phone width.

import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';

import * as h from './harness.mjs';

describe('local inbox', () => {
  let project;
  let web;
  let agent;
  let chrome;

  before(async () => {
    project = h.localProject('INB');
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

  async function unread(p) {
    return Number(await p.locator('#inbox-count').getAttribute('data-unread'));
  }

  test('a mention by an agent raises the count live; opening the entry reads it', async () => {
    // alice is known to the workspace: she files a ticket (through the page's own CLI user).
    h.run(h.binary('jility'), ['--json', 'ticket', 'create', '--title', 'Alice files this'], project.dir, { ...project.env, JILITY_ACTOR: h.HUMAN });
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/board`);
    await h.waitLive(page);
    const before = await unread(page);
    assert.equal(await page.locator('#inbox-count').isHidden(), before === 0);
    const key = await agent.create({ title: 'Needs Alice' });
    const started = Date.now();
    await agent.call('jility_add_comment', { ticket_id: key, content: `@${h.HUMAN} can you look at this? Not @stranger.` });
    await h.until('the count rises', async () => (await unread(page)) === before + 1);
    h.recordLatency('mention → header count', Date.now() - started);
    assert.match(await page.locator('#inbox-link').textContent(), /Inbox\s*\d+ unread/);

    await page.locator('#inbox-link').click();
    await page.locator('main[data-page="inbox"]').waitFor();
    const entry = page.locator('li.entry.unread', { hasText: key }).first();
    await entry.waitFor();
    assert.match(await entry.innerText(), /agent-1 mentioned you/);
    assert.match(await entry.innerText(), /Mention/);
    await entry.locator('form.open button').click();
    await page.locator('main[data-page="ticket"]').waitFor();
    assert.ok(page.url().endsWith(`/tickets/${key}`), page.url());
    // The mention is a link to the person; a stranger's stays text.
    const mention = page.locator('.comments a', { hasText: `@${h.HUMAN}` });
    assert.match(await mention.getAttribute('href'), /list\?q=assignee%3Aalice$/);
    assert.equal(await page.locator('.comments a', { hasText: '@stranger' }).count(), 0);
    assert.match(await page.locator('main').innerText(), /@stranger/);
    await h.until('the entry is read', async () => (await unread(page)) === before);
  });

  test('mark all read, the watch button, axe and phone width', async () => {
    const key = await agent.create({ title: 'Assigned to Alice', assignees: [h.HUMAN] });
    page = await h.newPage(chrome);
    await page.goto(`${web.ws}/inbox?unread=1`);
    await page.locator('li.entry.unread', { hasText: key }).waitFor();
    await page.getByRole('button', { name: 'Mark all read' }).click();
    await h.until('nothing unread', async () => (await unread(page)) === 0);
    await page.goto(`${web.ws}/inbox?unread=1`);
    await page.locator('main .empty').waitFor();

    // Watching: alice is assigned, so she watches; unwatching stops it.
    await page.goto(web.ticket(key));
    const button = page.locator('form.watch button');
    assert.equal(await button.innerText(), 'Unwatch');
    await button.click();
    await h.until('unwatched', async () => (await page.locator('form.watch button').innerText()) === 'Watch');
    await agent.status(key, 'todo');
    await page.goto(`${web.ws}/inbox?unread=1`);
    await page.locator('main .empty').waitFor();

    await agent.create({ title: 'Left unread', assignees: [h.HUMAN] });
    const found = await h.axeEach((o) => h.newPage(chrome, o), web.ws, ['/inbox', '/inbox?unread=1', `/tickets/${key}`, '/board']);
    assert.deepEqual(found, {});
    await h.phoneEach((o) => h.newPage(chrome, o), web.ws, ['/inbox']);
  });
});
