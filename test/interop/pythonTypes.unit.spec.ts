// The Python client's type hints, checked by pyright in strict mode (its configuration is in
// packages/python/pyproject.toml): the package, its tests and the suites' Python drivers have no
// error, and a program that misuses the client (a number for an oId, a misspelt answer field, a
// missing argument) is refused where it goes wrong.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PYTHON_CLIENT_SRC } from '../support/python.js';

const PYRIGHT = fileURLToPath(new URL('../../node_modules/pyright/index.js', import.meta.url));
const PROJECT = fileURLToPath(new URL('../../packages/python', import.meta.url));

interface Report {
  generalDiagnostics: Array<{ file: string; severity: string; message: string; range: { start: { line: number } } }>;
  summary: { filesAnalyzed: number; errorCount: number };
}

/** Runs pyright on a project folder; its JSON report (it exits 1 when it finds errors). */
async function pyright(project: string): Promise<Report> {
  const run = await promisify(execFile)(process.execPath, [PYRIGHT, '--outputjson', '--project', project], { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 }).catch(
    (error: { stdout?: string; code?: number }) => {
      if (error.code !== 1 || !error.stdout) throw error;
      return { stdout: error.stdout };
    },
  );
  return JSON.parse(run.stdout) as Report;
}

test('pyright in strict mode finds no error in the Python client, its tests and the drivers', async () => {
  assert.match(await readFile(join(PROJECT, 'pyproject.toml'), 'utf8'), /^typeCheckingMode = "strict"$/m);
  const report = await pyright(PROJECT);
  assert.equal(
    report.generalDiagnostics.filter((d) => d.severity === 'error').map((d) => `${d.file}:${d.range.start.line + 1}: ${d.message}`),
    [],
  );
  assert.ok(report.summary.filesAnalyzed >= 14, `${report.summary.filesAnalyzed} files analysed`);
});

const MISUSE = `from community_bridge import AdminClient

client = AdminClient("http://127.0.0.1:8090", "cbk_" + "0" * 27)
answer = client.points.edit("1630399136785", 5, "fine")
print(answer["msg"])
client.points.edit(1630399136785, 5, "an int for the oId")
print(answer["data"]["transactionID"])
client.vip.submit("1630399136785", "gold", "2027-01-01 00:00:00")
client.items.edit("1630399136785", "checkin1day")
pages = client.audit.points("1630399136785", limit="50")
`;

test('pyright refuses a program that misuses the client, on the lines that do', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'community-bridge-pyright-'));
  try {
    await writeFile(join(dir, 'pyrightconfig.json'), JSON.stringify({ extraPaths: [PYTHON_CLIENT_SRC], pythonVersion: '3.11', typeCheckingMode: 'standard' }));
    await writeFile(join(dir, 'game.py'), MISUSE);
    const report = await pyright(dir);
    const lines = [...new Set(report.generalDiagnostics.filter((d) => d.severity === 'error').map((d) => d.range.start.line + 1))].sort((a, b) => a - b);
    assert.equal(lines, [6, 7, 8, 9, 10], JSON.stringify(report.generalDiagnostics, null, 1));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
