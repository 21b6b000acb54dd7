// duvet's HTML report on a project for the browser suite and the README's screenshot:
// crates/duvet/tests/fixtures/upstream plus an exception and a TODO with a tracking issue, its
// report written by the built `duvet` with links to the code and to issues.

import fs from 'node:fs';
import path from 'node:path';

import * as h from './harness.mjs';

const FIXTURE = path.join(h.REPO, 'crates', 'duvet', 'tests', 'fixtures', 'upstream');
const MORE = [
  '//= specs/proto.md#halves',
  '//= type=exception',
  '//= reason=Logs are rotated by the platform.',
  '//# The server SHOULD rotate logs daily.',
  'fn logs() {}',
  '',
  '//= specs/rfc5869.txt#section-2.2',
  '//= type=todo',
  '//= tracking-issue=42',
  '//# The info string MAY be empty.',
  'fn info() {}',
  '',
].join('\n');

/** The project with its report written (in a temp dir removed at exit): the page's file:// URL. */
export function duvetReport() {
  const dir = h.tempDir('duvet');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'more.rs'), MORE);
  h.run(
    h.binary('duvet'),
    ['report', '--html', 'out/report.html', '--blob-link', 'https://github.com/example/app/blob/main', '--issue-link', 'https://github.com/example/app/issues'],
    dir,
    h.baseEnv(dir),
  );
  return `file://${path.join(dir, 'out', 'report.html')}`;
}
