// The screenshot of duvet's HTML report in the README (docs/screenshots/duvet-report.png,
// 1280×800): the report of test/duvet-fixture.mjs's project from its filters down. Run by hand
// after a change to the page (crates/duvet/src/report/html.rs):
//
//   (cd clients/web && npm ci && MCP_BIN_DIR=../../target/debug node duvet-screenshot.mjs)
//
// Writes into docs/screenshots (OUT to write elsewhere; AT, a CSS selector, to scroll elsewhere).
// COVERAGE=1 writes duvet-report-coverage.png instead: the report made with executed coverage
// (`--coverage-report`), from its first specification's table of executed states down.

import fs from 'node:fs';
import path from 'node:path';

import { duvetReport } from './test/duvet-fixture.mjs';
import * as h from './test/harness.mjs';

const OUT = path.resolve(process.env.OUT ?? path.join(h.REPO, 'docs', 'screenshots'));

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const coverage = Boolean(process.env.COVERAGE);
  const url = duvetReport({ coverage });
  const chrome = await h.browser();
  const page = await h.newPage(chrome, { viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  await page.locator(process.env.AT ?? (coverage ? '#spec0 .totals >> nth=1' : '.filters')).evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 8));
  await page.screenshot({ path: path.join(OUT, coverage ? 'duvet-report-coverage.png' : 'duvet-report.png') });
  await h.closeChecked(page);
  await h.cleanup();
}

main().catch(async (err) => {
  console.error(err);
  await h.cleanup().catch(() => {});
  process.exit(1);
});
