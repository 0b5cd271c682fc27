// Plain-text tables for the CLI's human output. Columns are measured in terminal cells: CJK
// characters (the platform's memos and messages are often Chinese) take two.

const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;

export function cells(text: string): number {
  let width = 0;
  for (const char of text) width += WIDE.test(char) ? 2 : 1;
  return width;
}

/** Rows of cells → aligned lines, two spaces between columns; the first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => cells(r[i] ?? ''))));
  return rows.map((r) => r.map((cell, i) => cell + ' '.repeat(widths[i]! - cells(cell))).join('  ').trimEnd()).join('\n') + '\n';
}
