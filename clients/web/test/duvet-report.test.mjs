// duvet's HTML report (`duvet report --html`) in Chromium, opened from its file as people open
// it: axe-core finds nothing (any impact, details open or closed), it loads nothing and runs
// no script under its own policy, it does not scroll sideways at 375 px and every control is in
// reach, and the status filters work from the keyboard and with JavaScript off. The same with
// executed coverage (`--coverage-report`): each requirement's executed state and the "Not
// executed" filter. The project: duvet-fixture.mjs.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, test } from 'node:test';

import { duvetReport } from './duvet-fixture.mjs';
import * as h from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const AXE_SOURCE = fs.readFileSync(path.join(here, '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's violations of any impact (the harness's helper keeps serious and critical). */
async function axeAll(page) {
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(async () =>
    // eslint-disable-next-line no-undef
    axe.run(document, { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } }),
  );
  return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
}

/** The statuses of the requirements shown, and the sections and specifications shown. */
function shown(page) {
  return page.evaluate(() => {
    const visible = (el) => el.getClientRects().length > 0;
    const of = (selector) => Array.from(document.querySelectorAll(selector)).filter(visible);
    return {
      requirements: of('.req').map((el) => Array.from(el.classList).find((c) => c.startsWith('s-')).slice(2)),
      sections: of('.sec').length,
      specs: of('.spec').length,
    };
  });
}

/** Each filter's status and the count on its label. */
function filterCounts(page) {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll('.filters input[type=radio]')).map((input) => ({
      slug: input.id.slice(2),
      count: Number(input.labels[0].querySelector('.n').textContent),
    })),
  );
}

describe('duvet report --html', () => {
  let url;
  let chrome;
  let page;

  before(async () => {
    url = duvetReport();
    chrome = await h.browser();
  });
  after(h.cleanup);
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  test('axe finds nothing; the page loads nothing and runs no script', async () => {
    page = await h.newPage(chrome);
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    assert.equal(await page.locator('script').count(), 0, 'no <script>');
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    assert.match(csp, /^default-src 'none'; style-src 'unsafe-inline'/);
    assert.deepEqual(await axeAll(page), [], 'axe, details closed');
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
    assert.deepEqual(await axeAll(page), [], 'axe, details open');
    // Each filter on, too (what a filter hides is gone, the rest must still be clean).
    for (const { slug } of await filterCounts(page)) {
      await page.locator(`#f-${slug}`).check();
      assert.deepEqual(await axeAll(page), [], `axe, filter ${slug}`);
    }
    assert.deepEqual(requests, [url], 'nothing but the page is loaded');
    // The links out: the code at the blob link, the issues at the issue link.
    assert.equal(await page.locator('a[href="https://github.com/example/app/blob/main/src/lib.rs#L2"]').count(), 1);
    assert.equal(await page.locator('a[href="https://github.com/example/app/issues/42"]').count(), 1);
  });

  test('at 375 px the page does not scroll sideways and every control is in reach', async () => {
    page = await h.newPage(chrome, { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await page.goto(url);
    for (const open of [false, true]) {
      if (open) await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
      const { scroll, widest } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        widest: Math.max(...Array.from(document.body.querySelectorAll('*')).map((el) => el.getBoundingClientRect().right)),
      }));
      assert.ok(scroll <= 375, `no sideways scroll (${scroll} px wide, details open: ${open})`);
      assert.ok(widest <= 375, `nothing sticks out (${widest} px, details open: ${open})`);
      const { unreachable, checked } = await h.reach(page);
      assert.ok(checked >= 10, `${checked} controls checked`);
      assert.deepEqual(unreachable, [], 'every control can be scrolled to and is not covered');
    }
  });

  test('the status filters work from the keyboard', async () => {
    page = await h.newPage(chrome);
    await page.goto(url);
    const counts = await filterCounts(page);
    const all = (await shown(page)).requirements;
    assert.equal(all.length, counts[0].count, 'all requirements shown at first');
    assert.ok(all.length >= 9);
    // Tab to the group (its checked radio), then the arrow keys choose a filter.
    let focused = '';
    for (let i = 0; i < 30 && focused !== 'f-all'; i += 1) {
      await page.keyboard.press('Tab');
      focused = await page.evaluate(() => document.activeElement?.id ?? '');
    }
    assert.equal(focused, 'f-all', 'the filters are reached with Tab');
    for (const { slug, count } of counts.slice(1)) {
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.evaluate(() => document.activeElement.id), `f-${slug}`);
      assert.ok(await page.locator(`#f-${slug}`).isChecked(), `${slug} is checked`);
      const now = await shown(page);
      assert.equal(now.requirements.length, count, `${slug}: as many requirements as its label says`);
      assert.ok(now.requirements.every((s) => s === slug), `${slug}: only those (${now.requirements})`);
      if (count === 0) assert.equal(now.specs, 0, `${slug}: no specification without one`);
      else assert.ok(now.sections >= 1 && now.sections <= count, `${slug}: only sections with one (${now.sections})`);
      // The focused filter shows its focus.
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
      assert.notEqual(outline, 'none', `${slug}: focus is visible`);
    }
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'f-all', 'round to All');
    assert.deepEqual((await shown(page)).requirements, all);
  });

  test('with JavaScript off the page reads and the filters work', async () => {
    page = await h.newPage(chrome, { javaScriptEnabled: false });
    await page.goto(url);
    await page.locator('h1').waitFor();
    assert.ok(await page.locator('.req.s-complete').first().isVisible());
    assert.ok(await page.locator('.body mark.h-ok').first().isVisible(), 'the quoted text is highlighted');
    await page.locator('label[for="f-not-started"]').click();
    assert.ok(await page.locator('#f-not-started').isChecked());
    assert.ok(await page.locator('.req.s-not-started').first().isVisible());
    assert.equal(await page.locator('.req.s-complete').first().isVisible(), false, 'other statuses hidden');
    await page.keyboard.press('ArrowLeft');
    assert.ok(await page.locator('#f-partial').isChecked(), 'the arrow keys move the filter');
    assert.ok(await page.locator('.req.s-partial').first().isVisible());
    assert.equal(await page.locator('.req.s-not-started').first().isVisible(), false);
  });
});

/** Each requirement's text and executed state (its `e-` class) and badge's words. */
function executedStates(page) {
  return page.evaluate(() =>
    Object.fromEntries(
      Array.from(document.querySelectorAll('.req')).map((el) => [
        el.querySelector('.rt').textContent,
        {
          state: Array.from(el.classList).find((c) => c.startsWith('e-'))?.slice(2),
          badge: el.querySelector('.rh .run')?.textContent,
          unexecuted: el.classList.contains('xr'),
        },
      ]),
    ),
  );
}

describe('duvet report --html --coverage-report', () => {
  let url;
  let chrome;
  let page;

  before(async () => {
    url = duvetReport({ coverage: true });
    chrome = await h.browser();
  });
  after(h.cleanup);
  afterEach(async () => {
    const open = page;
    page = null;
    if (open) await h.closeChecked(open);
  });

  test('each requirement says whether its code ran, in words and a sign; the page names its report', async () => {
    page = await h.newPage(chrome);
    await page.goto(url);
    const states = await executedStates(page);
    const expected = {
      'A server MUST accept BREW and POST.': ['partly-executed', '◐ Code partly executed'],
      'A server MUST reject PUT requests.': ['executed', '✓ Code executed'],
      'The server MUST log each request.': ['not-executed', '✗ Code not executed'],
      'The output length MUST NOT exceed 255 times the hash length.': ['unknown', '? Code not measured'],
      'The client MUST send a greeting first.': ['uncited', '– No implementation'],
    };
    for (const [text, [state, badge]] of Object.entries(expected)) {
      assert.equal(states[text]?.state, state, text);
      assert.equal(states[text]?.badge, badge, text);
    }
    assert.equal(Object.values(states).filter((s) => s.unexecuted).length, 3, 'not executed, partly, not measured');
    // The sign is not read out: the words say it.
    assert.equal(await page.locator('.rh .run > span[aria-hidden="true"]').count(), Object.keys(states).length);
    // Each implementation citation says whether its code ran.
    const accept = page.locator('.req', { hasText: 'A server MUST accept BREW and POST.' });
    assert.deepEqual(await accept.locator('.cr').allTextContents(), ['✓ executed', '✗ not executed', '✓ executed']);
    // The page names the report it was made from; the totals count the states.
    assert.match(await page.locator('header').textContent(), /code executed for 1 of 4 requirements with implementation citations, by the LCOV coverage report coverage\/lcov\.info\./);
    const table = page.getByRole('table', { name: 'Requirements of Proto by executed state and level' });
    assert.equal(await table.locator('tfoot td').last().textContent(), '6');
    assert.equal(await table.getByRole('row', { name: /Not executed/ }).locator('td').last().textContent(), '1');
  });

  test('axe finds nothing, with the legend and every filter; the page loads nothing and runs no script', async () => {
    page = await h.newPage(chrome);
    const requests = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    assert.equal(await page.locator('script').count(), 0, 'no <script>');
    assert.deepEqual(await axeAll(page), [], 'axe, details closed');
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
    assert.deepEqual(await axeAll(page), [], 'axe, details open');
    assert.match(await page.locator('.legend').textContent(), /partly_executed in the JSON reports and duvet mcp/);
    for (const { slug } of await filterCounts(page)) {
      await page.locator(`#f-${slug}`).check();
      assert.deepEqual(await axeAll(page), [], `axe, filter ${slug}`);
    }
    assert.deepEqual(requests, [url], 'nothing but the page is loaded');
  });

  test('the Not executed filter works from the keyboard', async () => {
    page = await h.newPage(chrome);
    await page.goto(url);
    const counts = await filterCounts(page);
    assert.deepEqual(counts.at(-1), { slug: 'not-executed', count: 3 }, 'the last filter, with its count');
    await page.locator('#f-not-started').focus();
    await page.keyboard.press('ArrowRight'); // not covered
    await page.keyboard.press('ArrowRight'); // not executed
    assert.equal(await page.evaluate(() => document.activeElement.id), 'f-not-executed');
    assert.ok(await page.locator('#f-not-executed').isChecked());
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'focus is visible');
    const shownStates = await page.evaluate(() =>
      Array.from(document.querySelectorAll('.req'))
        .filter((el) => el.getClientRects().length > 0)
        .map((el) => Array.from(el.classList).find((c) => c.startsWith('e-')).slice(2))
        .sort(),
    );
    assert.deepEqual(shownStates, ['not-executed', 'partly-executed', 'unknown']);
    const now = await shown(page);
    assert.equal(now.sections, 3, 'only the sections with one');
    assert.equal(now.specs, 2);
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'f-all', 'round to All');
    assert.equal((await shown(page)).requirements.length, counts[0].count);
  });

  test('with JavaScript off the filter works; at 375 px nothing scrolls sideways', async () => {
    page = await h.newPage(chrome, { javaScriptEnabled: false });
    await page.goto(url);
    await page.locator('label[for="f-not-executed"]').click();
    assert.ok(await page.locator('#f-not-executed').isChecked());
    assert.ok(await page.locator('.req.e-not-executed').first().isVisible());
    assert.equal(await page.locator('.req.e-executed').first().isVisible(), false, 'executed ones hidden');
    await h.closeChecked(page);

    page = await h.newPage(chrome, { viewport: { width: 375, height: 812 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await page.goto(url);
    for (const open of [false, true]) {
      if (open) await page.evaluate(() => document.querySelectorAll('details').forEach((d) => (d.open = true)));
      const { scroll, widest } = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        widest: Math.max(...Array.from(document.body.querySelectorAll('*')).map((el) => el.getBoundingClientRect().right)),
      }));
      assert.ok(scroll <= 375, `no sideways scroll (${scroll} px wide, details open: ${open})`);
      assert.ok(widest <= 375, `nothing sticks out (${widest} px, details open: ${open})`);
      const { unreachable } = await h.reach(page);
      assert.deepEqual(unreachable, [], 'every control can be scrolled to and is not covered');
    }
  });
});
