// The Dockerfile and .dockerignore read as `docker build` reads them, for the parts this
// repository uses: stages, instructions with their `--flag=value` options, continuation lines,
// exec-form (JSON) commands, `ENV k=v …`, and ignore patterns with `*`, `**`, `?` and `!`.
// Enough for a test to rebuild the image's file tree and run its commands without an engine.

export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  /** The rest of the line after the keyword and its flags. */
  args: string;
}

export interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** Logical lines: comments and blank lines dropped, `\` continuations joined. */
function logicalLines(text: string): string[] {
  const lines: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    lines.push(pending + line);
    pending = '';
  }
  if (pending) lines.push(pending.trim());
  return lines;
}

function instruction(line: string): Instruction {
  const [, keyword, rest] = /^(\S+)\s*(.*)$/.exec(line)!;
  const flags: Record<string, string> = {};
  let args = rest!;
  for (let flag = /^--([\w-]+)=(\S+)\s*/.exec(args); flag; flag = /^--([\w-]+)=(\S+)\s*/.exec(args)) {
    flags[flag[1]!] = flag[2]!;
    args = args.slice(flag[0].length);
  }
  return { keyword: keyword!.toUpperCase(), flags, args };
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const line of logicalLines(text)) {
    const parsed = instruction(line);
    if (parsed.keyword === 'FROM') stages.push({ name: /\sAS\s+(\S+)$/i.exec(parsed.args)?.[1], instructions: [] });
    else if (stages.length === 0) throw new Error(`${parsed.keyword} before the first FROM`);
    else stages.at(-1)!.instructions.push(parsed);
  }
  return stages;
}

/** A CMD/RUN/HEALTHCHECK command as the argv Docker runs: the exec form, or the shell form under sh -c. */
export function commandOf(args: string): string[] {
  return args.startsWith('[') ? (JSON.parse(args) as string[]) : ['/bin/sh', '-c', args];
}

/** `ENV a=1 b=2` (unquoted values, as this repository writes them). */
export function envOf(args: string): Record<string, string> {
  if (/["']/.test(args)) throw new Error(`quoted ENV values are not read here: ${args}`);
  return Object.fromEntries(args.split(/\s+/).map((pair) => pair.split('=', 2) as [string, string]));
}

/** `COPY a b ./dest` → sources and destination (no globs: every source is a path). */
export function copyOf(args: string): { sources: string[]; dest: string } {
  const parts = args.split(/\s+/);
  if (parts.some((p) => /[*?[]/.test(p))) throw new Error(`COPY with a wildcard is not reproduced here: ${args}`);
  return { sources: parts.slice(0, -1), dest: parts.at(-1)! };
}

const patternSource = (pattern: string) =>
  pattern.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*\*\/|\*\*|\*|\?/g, (token) => ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[token]!);

/**
 * `.dockerignore` as a predicate over context paths (`a/b/c`): the last pattern that matches the
 * path or one of its parent directories decides, `!` letting it back in.
 */
export function dockerIgnore(text: string): (path: string) => boolean {
  const rules = logicalLines(text).map((line) => {
    const include = line.startsWith('!');
    const pattern = (include ? line.slice(1) : line).replace(/^\/+/, '').replace(/\/+$/, '');
    return { include, regex: new RegExp(`^${patternSource(pattern)}$`) };
  });
  return (path) => {
    const parts = path.split('/');
    const candidates = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (candidates.some((c) => rule.regex.test(c))) excluded = !rule.include;
    return excluded;
  };
}
