/** Asks `probe` every 25 ms until it finds something (at most 5 s): waiting for a condition, not for a time. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never happened: ${what}`);
}
