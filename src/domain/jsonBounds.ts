// Bounds on client-supplied JSON. The walk is iterative: a value nested thousands of levels deep
// is measured without recursion, so the check itself cannot overflow the stack that a recursive
// walk (JSON.stringify, a canonical form, a schema) would.

/** Limits of a push (docs/api.md, `POST /adm/message/push`): nesting depth and size of its `data`'s JSON text, and its recipients. */
export interface PushLimits {
  maxDepth: number;
  maxBytes: number;
  /** `oIds` and `userIds` together. */
  maxRecipients: number;
}

/** True when `value` nests objects or arrays more than `maxDepth` levels (`{}` is 1, a scalar 0). */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** What is wrong with a push's recipients under the limits, or undefined when they fit. */
export function pushRecipientsProblem(oIds: readonly string[], userIds: readonly string[], { maxRecipients }: PushLimits): string | undefined {
  const count = oIds.length + userIds.length;
  if (count <= maxRecipients) return undefined;
  return `names ${count} recipients (oIds and userIds together); a push reaches at most ${maxRecipients}: push to larger audiences in several pushes`;
}

/** What is wrong with a push's `data` under the limits, or undefined when it fits. */
export function pushDataProblem(data: unknown, limits: PushLimits): string | undefined {
  if (exceedsDepth(data, limits.maxDepth)) return `must be nested at most ${limits.maxDepth} levels deep`;
  // Safe to serialise now: the depth is bounded.
  if (Buffer.byteLength(JSON.stringify(data)) > limits.maxBytes) return `must be at most ${limits.maxBytes} bytes as JSON`;
  return undefined;
}
