// Live latency of the web board (issue 24): run by hand, `node clients/web/bench-live.mjs`
// (MCP_BIN_DIR picks the jility binary's directory; CHANGES=200, TICKETS=50 by default).
// A temp project with TICKETS tickets, `jility web` on it, the board open in Chromium with its
// live stream on; an MCP agent (stdio, `jility --mcp-server`) makes CHANGES changes one after
// another — legal status moves of random tickets and some creates. For each: the MCP call's
// own round trip (the baseline) and the time from just before the call until the card shows
// in its column (polled in the page with page.waitForFunction; no script added to the page).
// Prints a markdown table of p50/p95/p99/max.

import os from 'node:os';

import * as h from './test/harness.mjs';

const CHANGES = Number(process.env.CHANGES ?? 200);
const TICKETS = Number(process.env.TICKETS ?? 50);
const TIMEOUT = 10_000;

// The workflow (jility-core Status::transitions).
const MOVES = {
  backlog: ['todo', 'in_progress', 'blocked'],
  todo: ['backlog', 'in_progress', 'blocked'],
  in_progress: ['todo', 'review', 'done', 'blocked'],
  review: ['in_progress', 'done', 'blocked'],
  blocked: ['backlog', 'todo', 'in_progress', 'review'],
  done: ['todo', 'in_progress'],
};
const pick = (list) => list[Math.floor(Math.random() * list.length)];

function pct(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main() {
  const project = h.localProject('BEN');
  const agent = await h.localAgent(project);
  const status = new Map();
  const count = () => {
    const c = {};
    for (const s of status.values()) c[s] = (c[s] ?? 0) + 1;
    return c;
  };
  // Seed: tickets spread over the columns by legal moves (a column shows 25 cards a page).
  for (let i = 1; i <= TICKETS; i++) {
    const key = await agent.create({ title: `Bench ticket ${i}` });
    status.set(key, 'backlog');
    const target = pick(Object.keys(MOVES));
    const path = { backlog: [], todo: ['todo'], in_progress: ['in_progress'], review: ['in_progress', 'review'], done: ['in_progress', 'done'], blocked: ['blocked'] }[target];
    for (const s of path) {
      await agent.status(key, s);
      status.set(key, s);
    }
  }
  const web = await h.localWeb(project);
  const chrome = await h.browser();
  const page = await h.newPage(chrome);
  await page.goto(web.board);
  await h.waitLive(page);

  const visible = [];
  const mcp = [];
  let creates = 0;
  let failures = 0;
  for (let i = 1; i <= CHANGES; i++) {
    let key;
    let to;
    let call;
    const started = performance.now();
    if (i % 10 === 0) {
      call = agent.create({ title: `Bench new ${i}` }).then((k) => {
        key = k;
      });
      to = 'backlog';
      creates++;
    } else {
      const counts = count();
      // A random ticket and a legal move whose column stays within one page of cards.
      for (;;) {
        key = pick([...status.keys()]);
        to = pick(MOVES[status.get(key)]);
        if ((counts[to] ?? 0) < 24) break;
      }
      call = agent.status(key, to);
    }
    await call;
    const called = performance.now();
    status.set(key, to);
    try {
      await page.waitForFunction(
        ([s, k]) => document.querySelector(`.column[data-status="${s}"] .card[data-ticket="${k}"]`) !== null,
        [to, key],
        { polling: 'raf', timeout: TIMEOUT },
      );
      visible.push(performance.now() - started);
      mcp.push(called - started);
    } catch {
      failures++;
    }
  }
  const row = (label, v) =>
    `| ${label} | ${v.length} | ${pct(v, 50).toFixed(0)} | ${pct(v, 95).toFixed(0)} | ${pct(v, 99).toFixed(0)} | ${Math.max(...v).toFixed(0)} |`;
  const lines = [
    `Local \`jility web\`, ${TICKETS} seeded tickets, ${CHANGES} changes (${creates} creates), ${failures} not visible within ${TIMEOUT} ms; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cores`,
    '',
    '| measure (ms) | n | p50 | p95 | p99 | max |',
    '|---|---|---|---|---|---|',
    row('MCP call round trip (baseline)', mcp),
    row('MCP call → card visible in Chromium', visible),
    '',
    `visible p50/p99 = ${pct(visible, 50).toFixed(0)} / ${pct(visible, 99).toFixed(0)} ms; MCP call p50/p99 = ${pct(mcp, 50).toFixed(0)} / ${pct(mcp, 99).toFixed(0)} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const problems = page.problems();
  if (problems.length) process.stdout.write(`page problems: ${problems.join('; ')}\n`);
  return failures === 0 && pct(visible, 99) < 1000;
}

let ok = false;
try {
  ok = await main();
} finally {
  await h.cleanup();
}
process.exit(ok ? 0 : 1);
