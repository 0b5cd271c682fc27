// Python programs run from a suite: python3 as a child process that does not block the event loop
// (the service under test often runs in the suite's own process), with the repository's Python
// client importable and no bytecode written into the checkout.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The Python client's sources (`import community_bridge`). */
export const PYTHON_CLIENT_SRC = fileURLToPath(new URL('../../packages/python/src', import.meta.url));

const DEFAULT_TIMEOUT_MS = 60_000;

export interface PythonRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface PythonOptions {
  cwd?: string;
  /** Written to its standard input, which is then closed. */
  input?: string;
  /** Killed after this long (default 60 s): a hung program fails its test instead of the whole file. */
  timeoutMs?: number;
}

/** Runs `python3 <args>` in development mode (warnings such as an unclosed socket are printed to stderr). */
export function runPython(args: string[], options: PythonOptions = {}): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-X', 'dev', ...args], {
      cwd: options.cwd,
      env: { ...process.env, PYTHONPATH: PYTHON_CLIENT_SRC, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}
