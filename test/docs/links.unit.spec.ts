// The README and docs/ stand on their own in a user's clone: every link is a web address or a
// file of this repository that exists, and every #anchor names a heading of its target.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = new URL('../..', import.meta.url).pathname;
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower-cased, punctuation dropped, spaces as dashes. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string) =>
  new Set(
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .filter((line) => /^#{1,6} /.test(line))
      .map((line) => slug(line.replace(/^#+ /, ''))),
  );

/** Markdown links outside code blocks and code spans. */
function linksOf(file: string): string[] {
  const prose = readFileSync(join(root, file), 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`(?!\])/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
}

test('every link in the README and docs/ stays in the repository and reaches a file and heading that exist', () => {
  let checked = 0;
  for (const file of documents) {
    for (const link of linksOf(file)) {
      if (/^(https?|mailto):/.test(link)) continue;
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : relative(root, join(root, dirname(file), path));
      assert.not.ok(target.startsWith('..'), `${file}: ${link} leaves the repository`);
      assert.ok(existsSync(join(root, target)), `${file}: ${link} names no file`);
      if (anchor !== undefined) assert.ok(anchorsOf(target).has(anchor), `${file}: ${link} names no heading of ${target}`);
      checked++;
    }
  }
  assert.ok(checked >= 10, `links found (${checked})`);
});

test.run();
