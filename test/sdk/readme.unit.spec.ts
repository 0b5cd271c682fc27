// The SDK's README lists every method of the admin client, and nothing it does not have: the
// groups and methods of a real client (createAdminClient, as the package exports it) against the
// README's table of them; and every class and function the package exports is named in it.
import * as sdk from '@community-bridge/sdk';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const readme = readFileSync(new URL('../../packages/sdk/README.md', import.meta.url), 'utf8');

/** The README's table of groups and methods: group → method names. */
function documentedMethods(): Map<string, string[]> {
  const lines = readme.split('\n');
  const header = lines.findIndex((line) => /^\| group +\| methods/.test(line));
  assert.ok(header >= 0, 'a table of groups and methods');
  const end = lines.findIndex((line, i) => i > header && !line.startsWith('|'));
  const rows = lines.slice(header + 2, end);
  return new Map(
    rows.map((row) => {
      const [group, methods] = row
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim());
      return [group!.replace(/`/g, ''), [...methods!.matchAll(/`([a-zA-Z]+)\(/g)].map((match) => match[1]!)];
    }),
  );
}

test("the README's table holds every group and method of the admin client, and no other", () => {
  const client = sdk.createAdminClient({ baseUrl: 'http://127.0.0.1:1', apiKey: `cbk_${'a'.repeat(27)}`, fetch: () => Promise.reject(new Error('not called')) });
  const actual = new Map(Object.entries(client).map(([group, methods]) => [group, Object.keys(methods as object).sort()]));
  const documented = new Map([...documentedMethods()].map(([group, methods]) => [group, [...methods].sort()]));
  assert.ok(actual.has('operations'), 'the client read');
  assert.equal([...documented.keys()].sort(), [...actual.keys()].sort(), 'the groups');
  for (const [group, methods] of actual) assert.equal(documented.get(group), methods, `the methods of ${group}`);
});

test('every function and class the package exports is named in the README', () => {
  const exported = Object.entries(sdk).filter(([, value]) => typeof value === 'function');
  assert.ok(exported.length >= 5, 'exports read');
  for (const [name] of exported) assert.match(readme, `\`${name}\``, `${name} is in the README`);
});

test.run();
