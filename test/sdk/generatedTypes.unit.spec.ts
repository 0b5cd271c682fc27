// The SDK's committed API types are what the service's OpenAPI document generates today: a
// change to a request or response schema fails here until `npm run sdk:types` is run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { committedSdkTypes, generateSdkTypes } from '../../scripts/sdkTypes.js';

test('packages/sdk/src/generated/openapi.ts matches a fresh generation', async () => {
  const committed = committedSdkTypes().split('\n');
  const fresh = (await generateSdkTypes()).split('\n');
  const line = fresh.findIndex((text, i) => committed[i] !== text);
  const differs = line !== -1 || committed.length !== fresh.length;
  const at = line === -1 ? Math.min(committed.length, fresh.length) : line;
  assert.ok(
    !differs,
    `stale SDK types (run npm run sdk:types); first difference at line ${at + 1}:\n  committed: ${committed[at] ?? '(end)'}\n  generated: ${fresh[at] ?? '(end)'}`,
  );
});

test.run();
