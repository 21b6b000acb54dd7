// Runs the 2026-07-28 scenarios of the MCP conformance suite's 0.2 pre-release
// (@modelcontextprotocol/conformance 0.2.0-alpha.x, pinned in package.json; `--spec-version
// 2026-07-28`: the stateless wire, per-request `_meta`) that apply to a server without the
// suite's reference fixtures, against every server over Streamable HTTP, `jility serve` and
// the cloud-mode bridge (the driver is clients/conformance/runner.mjs). Which scenarios, and why the others are not
// run: clients/README.md. Needs Node.js >= 22. Exits 1 when any scenario fails.
//
// Usage: node run.mjs [server…]   (as clients/conformance/run.mjs)

import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { TARGETS, capabilitiesOf, runSuite } from '../conformance/runner.mjs';

const SPEC = '2026-07-28';

function scenariosFor(name) {
  const caps = capabilitiesOf(name);
  const list = [
    'server-stateless',
    'tools-list',
    'dns-rebinding-protection',
    'caching',
    'http-header-validation',
    'server-sse-multiple-streams',
    'input-required-result-unsupported-methods',
    'completion-complete',
  ];
  if (caps.includes('resources')) list.push('resources-list', 'sep-2164-resource-not-found');
  if (caps.includes('prompts')) list.push('prompts-list');
  return process.env.CONFORMANCE_SCENARIOS ? process.env.CONFORMANCE_SCENARIOS.split(',') : list;
}

// Checks that cannot pass for a reason outside the servers (clients/README.md says the same).
const FIXTURE_TOOL = "needs a diagnostic tool of the suite's reference server";
const NO_CAPABILITY = 'asks a method of a capability the server does not declare (answered -32601, as the spec has it)';
const EXCLUDED_CHECKS = {
  'server-stateless:sep-2575-server-rejects-undeclared-capability': `${FIXTURE_TOOL} (test_missing_capability)`,
  'server-stateless:sep-2575-missing-capability-http-400': `${FIXTURE_TOOL} (test_missing_capability)`,
  'server-stateless:sep-2575-http-server-no-independent-requests-on-stream': `${FIXTURE_TOOL} (test_streaming_elicitation)`,
  'server-stateless:sep-2575-server-no-log-without-loglevel': `${FIXTURE_TOOL} (test_logging_tool)`,
  'http-header-validation:sep-2243-server-accepts-whitespace-header-value git-mile':
    "calls the first tool with no arguments and takes any JSON-RPC error as the header's refusal; git-mile's contract (docs/reference/git-mile-mcp.md) answers arguments that do not decode (git_mile.list without `entity`) with -32600",
};

// Scenarios not run against one server, for a reason outside it.
const EXCLUDED = {};

// `caching` asks prompts/list and resources/list of every server, and `completion-complete`
// asks completion/complete: a server that declares none of them answers -32601, as the spec
// has it (git-mile, and jility in every mode).
for (const target of TARGETS) {
  const caps = capabilitiesOf(target);
  if (!caps.includes('prompts')) {
    EXCLUDED_CHECKS[`caching:sep-2549-prompts-list-caching-hints ${target}`] = `${NO_CAPABILITY} (prompts)`;
  }
  if (!caps.includes('resources')) {
    EXCLUDED_CHECKS[`caching:sep-2549-resources-list-caching-hints ${target}`] = `${NO_CAPABILITY} (resources)`;
    EXCLUDED_CHECKS[`caching:sep-2549-resources-templates-list-caching-hints ${target}`] = `${NO_CAPABILITY} (resources)`;
  }
  // Completions complete prompt and resource-template arguments: a server with neither
  // declares none.
  if (!caps.includes('prompts') && !caps.includes('resources')) {
    EXCLUDED[`completion-complete ${target}`] = `${NO_CAPABILITY} (completions)`;
  }
}

const wanted = process.argv.slice(2);
await runSuite({
  label: `conformance-${SPEC}`,
  packageDir: path.dirname(fileURLToPath(import.meta.url)),
  targets: wanted.length ? wanted : TARGETS,
  scenariosFor,
  excluded: EXCLUDED,
  excludedChecks: EXCLUDED_CHECKS,
  extraArgs: ['--spec-version', SPEC],
});
