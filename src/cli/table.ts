// Plain-text tables for the CLI's human output. Columns are measured in terminal cells: CJK
// characters (the platform's memos and messages are often Chinese) take two.

const WIDE = /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{20000}-\u{3fffd}]/u;

export function cells(text: string): number {
  let width = 0;
  for (const char of text) width += WIDE.test(char) ? 2 : 1;
  return width;
}

/** C0 (newlines and tabs too), DEL, C1 and the bidirectional overrides. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is its job
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from the log (memos, app names, message data) made safe for a terminal: a control
 * character is shown as its `\uXXXX` escape, so an escape sequence in a memo cannot move the
 * cursor, recolour, retitle the window or write a hyperlink on the operator's terminal.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Rows of cells → aligned lines, two spaces between columns; the first row is the header. */
export function table(rows: string[][]): string {
  rows = rows.map((row) => row.map(escapeControl));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => cells(r[i] ?? ''))));
  return `${rows
    .map((r) =>
      r
        .map((cell, i) => cell + ' '.repeat(widths[i]! - cells(cell)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}
