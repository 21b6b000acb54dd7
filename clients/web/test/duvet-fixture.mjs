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

// A coverage report of src/lib.rs (LCOV, as `cargo tarpaulin --out Lcov` writes it): of the
// implementations of "A server MUST accept BREW and POST." two ran and one did not (partly
// executed), both of "A server MUST reject PUT requests." ran (executed), that of "The server
// MUST log each request." did not (not executed), and the line under that of section 2.2 has
// no data (not measured).
const LCOV = ['SF:src/lib.rs', 'DA:4,1', 'DA:8,0', 'DA:13,3', 'DA:17,1', 'DA:22,0', 'DA:45,1', 'end_of_record', ''].join('\n');

/**
 * The project with its report written (in a temp dir removed at exit): the page's file:// URL.
 * With `coverage`, the report is made with executed coverage from LCOV above.
 */
export function duvetReport({ coverage = false } = {}) {
  const dir = h.tempDir('duvet');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'more.rs'), MORE);
  const args = ['report', '--html', 'out/report.html', '--blob-link', 'https://github.com/example/app/blob/main', '--issue-link', 'https://github.com/example/app/issues'];
  if (coverage) {
    fs.mkdirSync(path.join(dir, 'coverage'));
    fs.writeFileSync(path.join(dir, 'coverage', 'lcov.info'), LCOV);
    args.push('--coverage-report', 'coverage/lcov.info');
  }
  h.run(h.binary('duvet'), args, dir, h.baseEnv(dir));
  return `file://${path.join(dir, 'out', 'report.html')}`;
}
