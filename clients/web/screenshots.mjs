// The screenshots of docs/screenshots (board.png, ticket.png, epic.png, plan.png, list.png, new.png,
// bulk.png, 1280×800),
// taken from a small realistic project: an epic, a dozen tickets with labels, points, a person
// and agents assigned, one blocked, a dependency, comments, a sprint being planned. Run by hand after a change to the pages:
//
//   (cd clients/web && npm ci && MCP_BIN_DIR=../../target/debug node screenshots.mjs)
//
// Writes into docs/screenshots (OUT to write elsewhere).

import fs from 'node:fs';
import path from 'node:path';

import * as h from './test/harness.mjs';

const OUT = path.resolve(process.env.OUT ?? path.join(h.REPO, 'docs', 'screenshots'));

const TICKETS = [
  { title: 'Sign-in with email and password', points: 5, labels: ['auth', 'ui'], who: [h.HUMAN], status: 'done' },
  { title: 'Rate-limit failed sign-ins per address', points: 3, labels: ['auth', 'security'], who: ['claude-1'], status: 'review' },
  { title: 'Password reset links expire after 24 hours', points: 2, labels: ['auth'], who: ['claude-1'], status: 'in_progress' },
  { title: 'Board columns page past 50 cards', points: 3, labels: ['board', 'perf'], who: [h.HUMAN, 'codex-2'], status: 'in_progress' },
  { title: 'Keyboard moves on the board', points: 2, labels: ['board', 'a11y'], who: ['codex-2'], status: 'todo' },
  { title: 'Export tickets as CSV', points: 3, labels: ['api'], who: [], status: 'backlog' },
  { title: 'Webhook on status change', points: 5, labels: ['api', 'integrations'], who: [], status: 'backlog' },
  { title: 'Dark mode', points: 2, labels: ['ui'], who: [], status: 'backlog' },
  { title: 'Audit log shows the token that acted', points: 3, labels: ['security'], who: [h.HUMAN], status: 'todo' },
  { title: 'Invite links for new members', points: 3, labels: ['auth'], who: ['claude-1'], status: 'blocked' },
  { title: 'Search highlights matched words', points: 1, labels: ['search', 'ui'], who: ['codex-2'], status: 'review' },
  { title: 'Mobile layout of the ticket page', points: 2, labels: ['ui', 'a11y'], who: [h.HUMAN], status: 'todo' },
];

const PATHS = {
  backlog: [],
  todo: ['todo'],
  in_progress: ['in_progress'],
  review: ['in_progress', 'review'],
  done: ['in_progress', 'done'],
  blocked: ['blocked'],
};

const DESCRIPTION = `Members join a workspace through a one-time link an owner or admin makes.

## Acceptance

- The link names the workspace and the role it grants.
- It works once, and expires after **7 days**.
- A signed-in person who opens it joins without a new password.

## Tasks

- [x] Table of invites with the hash of the secret
- [x] \`jility admin invite\` prints the link
- [ ] Accept page: name, email, password
- [ ] Settings page lists open invites with a Revoke button

## Notes

Blocked on the session store (see the dependency): the accept page signs the person in.
`;

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const project = h.localProject('APP');
  const agent = await h.localAgent(project);
  const epic = await agent.create({ title: 'Accounts and sign-in', kind: 'epic', description: 'People sign in, reset passwords and join workspaces by invite.' });
  await agent.status(epic, 'in_progress');
  const keys = [];
  for (const t of TICKETS) {
    const inEpic = t.labels.includes('auth') ? { epic_id: epic } : {};
    const key = await agent.create({ title: t.title, story_points: t.points, labels: t.labels, ...inEpic, ...(t.status === 'blocked' ? { description: DESCRIPTION } : {}) });
    if (t.who.length) await agent.call('jility_assign_ticket', { ticket_id: key, assignees: t.who });
    for (const step of PATHS[t.status]) await agent.status(key, step);
    keys.push(key);
  }
  const invite = keys[TICKETS.findIndex((t) => t.status === 'blocked')];
  const signIn = keys[0];
  await agent.call('jility_add_dependency', { ticket_id: invite, depends_on: keys[2] }).catch(() => {});
  await agent.call('jility_link_commit', { ticket_id: invite, commit_hash: '6dcb09b5b57875f334f61aebed695e2e4193db5e', commit_message: 'Invites table and admin command' });
  await agent.call('jility_add_comment', { ticket_id: invite, content: 'The table and the CLI are in; the accept page waits on password resets (the session code is shared).' });

  const web = await h.localWeb(project);
  const chrome = await h.browser();
  const page = await h.newPage(chrome, { viewport: { width: 1280, height: 800 } });
  await page.goto(web.board);
  await h.waitLive(page);
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(OUT, 'board.png') });
  await page.goto(web.ticket(invite));
  await page.locator('main[data-page="ticket"]').waitFor();
  await h.waitLive(page);
  await page.screenshot({ path: path.join(OUT, 'ticket.png') });
  if (process.env.FULL) await page.screenshot({ path: path.join(OUT, "ticket-full.png"), fullPage: true });
  await page.goto(`${web.ws}/epics/${epic}`);
  await page.locator('main[data-page="epic"]').waitFor();
  await h.waitLive(page);
  await page.screenshot({ path: path.join(OUT, 'epic.png') });
  const today = new Date();
  const date = (days) => new Date(today.getTime() + days * 86_400_000).toISOString().slice(0, 10);
  await agent.call('jility_create_sprint', { name: 'Sprint 7', goal: 'Invites and the audit trail', starts_on: date(3), ends_on: date(16), capacity_points: 10 });
  await agent.call('jility_add_to_sprint', { sprint: 'Sprint 7', tickets: [keys[TICKETS.findIndex((t) => t.title.startsWith('Audit log'))]] });
  await page.goto(`${web.ws}/plan?sprint=Sprint%207&propose=1`);
  await page.locator('main[data-page="plan"] [data-proposal]').waitFor();
  await h.waitLive(page);
  await page.screenshot({ path: path.join(OUT, 'plan.png') });
  // The query language on the list, with saved views beside it and two rows ticked for a
  // bulk edit; then that edit's preview.
  await agent.call('jility_save_view', { name: 'Auth work', query: 'label:auth is:open', shared: true });
  await agent.call('jility_save_view', { name: 'Needs review', query: 'status:review sort:updated-desc' });
  await page.goto(`${web.ws}/list?q=${encodeURIComponent('is:open points:>1 sort:points-desc')}`);
  await page.locator('main[data-page="list"]').waitFor();
  const rows = page.locator('table.tickets tbody tr');
  await rows.nth(0).locator('input[name=ticket]').check();
  await rows.nth(1).locator('input[name=ticket]').check();
  await page.locator('fieldset[data-bulk] select[name=status]').selectOption('todo');
  await page.locator('fieldset[data-bulk] input[name=add_label]').fill('sprint-7');
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(OUT, 'list.png'), fullPage: true });
  await page.locator('fieldset[data-bulk] button[value=preview]').click();
  await page.locator('main[data-page="bulk-preview"]').waitFor();
  await page.screenshot({ path: path.join(OUT, 'bulk.png') });
  // The new-ticket form naming a likely duplicate as the title is typed.
  await page.goto(`${web.ws}/new`);
  await page.locator('#n-title').pressSequentially('Password reset email link has expired', { delay: 10 });
  await page.locator('#n-duplicates a').first().waitFor();
  await page.mouse.move(0, 0);
  await page.screenshot({ path: path.join(OUT, 'new.png') });
  const problems = [...page.problems(), ...(await page.csp()).map((v) => JSON.stringify(v))];
  await h.cleanup();
  if (problems.length) throw new Error(`the pages reported problems: ${problems.join('; ')}`);
  console.log(`wrote ${path.join(OUT, 'board.png')}, ticket.png, epic.png, plan.png, list.png, bulk.png and new.png (signed-in ticket ${signIn}, blocked ${invite}, epic ${epic})`);
}

main().catch(async (err) => {
  console.error(err);
  await h.cleanup().catch(() => {});
  process.exitCode = 1;
});
