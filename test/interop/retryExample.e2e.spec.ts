// docs/api.md's Python retry example, run as written against a running service: it sends each
// write once whatever it meets on the way (the rate limit's 429s), stops at an unknown outcome
// without sending it again, and stops at a refusal that a retry cannot fix.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ALICE, withHarness } from '../support/harness.js';
import { runPython } from '../support/python.js';

/** The first ```python block of the "Retrying" section. */
function documentedExample(): string {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('\n## Retrying'));
  const block = /```python\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'a Python example in "Retrying"');
  return block![1]!;
}

const DRIVER = (oId: string) => `
import json
from example import *
out = {"applied": [], "refused": None, "unknown": None}
try:
    post("/adm/points/edit", {"oId": "${oId}", "point": 5, "memo": "docs unknown"})
except OutcomeUnknown as error:
    out["unknown"] = error.args[0]
for n in range(3):
    out["applied"].append(post("/adm/points/edit", {"oId": "${oId}", "point": 1, "memo": f"docs example {n}"})["code"])
try:
    post("/adm/points/edit", {"oId": "${oId}", "point": 0, "memo": "docs refused"})
except RuntimeError as error:
    out["refused"] = str(error)
print(json.dumps(out))
`;

test('the Python example of docs/api.md retries what it may, once, and never resends an unknown outcome', () =>
  withHarness({ COMMUNITY_TIMEOUT_MS: '300', RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '1' }, async (h) => {
    const { key } = await h.key(['*']);
    const example = documentedExample();
    const settings = /^URL, KEY = .*$/m;
    assert.match(example, settings);
    const dir = await mkdtemp(join(tmpdir(), 'community-bridge-retry-'));
    try {
      // The example as a module (its own main part does not run), the driver beside it.
      await writeFile(join(dir, 'example.py'), example.replace(settings, `URL, KEY = ${JSON.stringify(h.url)}, ${JSON.stringify(key)}`));
      await writeFile(join(dir, 'driver.py'), DRIVER(ALICE.oId));
      h.sim.faultNext('/user/edit/points', { kind: 'hang' });
      const run = await runPython(['driver.py'], { cwd: dir });
      assert.is(run.code, 0, `python3:\n${run.stdout}${run.stderr}`);
      const out = JSON.parse(run.stdout);
      assert.match(out.unknown, /^[a-z0-9]{15}$/, 'the unknown outcome names its operation');
      assert.is(h.sim.arrivals('/user/edit/points').filter((a) => a.body.memo === 'docs unknown').length, 1, 'and it was sent once');
      assert.equal(out.applied, [0, 0, 0], 'each write succeeds through the rate limit');
      for (const n of [0, 1, 2]) assert.is(h.sim.pointsApplied(`docs example ${n}`), 1, `docs example ${n} applied once`);
      assert.match(out.refused, /^400 validation_failed: point: must not be 0/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));

test.run();
