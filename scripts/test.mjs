#!/usr/bin/env node
// Runs every test/**/*.spec.ts in its own Node process (so one suite's ports, timers or
// crash cannot disturb another), two at a time, and ends with the one line CI reads:
// "N passed, N failed". uvu's own per-file totals are parsed for the counts.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus } from 'node:os';
import { stripVTControlCharacters } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const filter = process.argv[2] ? new RegExp(process.argv[2]) : null;
const perFileTimeoutMs = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 180_000);
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(1, Math.min(2, cpus().length)));

function findSpecs(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return findSpecs(path);
    return name.endsWith('.spec.ts') ? [path] : [];
  });
}

const files = findSpecs(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => !filter || filter.test(f))
  .sort();

function runFile(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      out += `\n[test runner] ${file} did not finish within ${perFileTimeoutMs} ms (an open handle?): killed\n`;
      child.kill('SIGKILL');
    }, perFileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const text = stripVTControlCharacters(out);
      const total = Number(/Total:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const passed = Number(/Passed:\s+(\d+)/.exec(text)?.[1] ?? 0);
      const skipped = Number(/Skipped:\s+(\d+)/.exec(text)?.[1] ?? 0);
      let failed = total - passed; // uvu's Total leaves out skipped tests
      // A file that crashed, hung or exited non-zero without a failing test still fails the run.
      if (failed === 0 && code !== 0) failed = 1;
      resolve({ file, passed, failed, skipped, text, code });
    });
  });
}

const started = Date.now();
const results = [];
const queue = [...files];
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const r = await runFile(file);
      results.push(r);
      const mark = r.failed ? 'FAIL' : 'ok  ';
      process.stdout.write(`${mark} ${file}  (${r.passed} passed${r.skipped ? `, ${r.skipped} skipped` : ''}${r.failed ? `, ${r.failed} failed` : ''})\n`);
      const lines = r.text.split('\n').filter((l) => l.trim() && !/^\s*(Total|Passed|Skipped|Duration):/.test(l));
      // A failure shows its output; a pass shows only the reasons of what it skipped.
      const shown = r.failed ? lines : lines.filter((l) => /skipped:/i.test(l)).map((l) => l.trim());
      if (shown.length) process.stdout.write(`${shown.map((l) => `     ${l}`).join('\n')}\n`);
    }
  }),
);

const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const skipped = results.reduce((n, r) => n + r.skipped, 0);
process.stdout.write(`\n${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s${skipped ? `, ${skipped} skipped (reasons above)` : ''}\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exit(failed ? 1 : 0);
