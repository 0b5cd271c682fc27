// The console's one table: columns that sort on a click, pages of rows, and a sentence when there
// is nothing to show.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';

export interface Column<Row> {
  label: string;
  /** The value the column sorts by; no sorting without it. */
  sort?: (row: Row) => string | number;
  render: (row: Row) => ComponentChildren;
  className?: string;
}

interface TableProps<Row> {
  columns: Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  empty: string;
  pageSize?: number;
  /** The column index first sorted by, and its direction. */
  initialSort?: { column: number; descending: boolean };
  label: string;
}

export function Table<Row>({ columns, rows, rowKey, empty, pageSize = 20, initialSort, label }: TableProps<Row>) {
  const [sort, setSort] = useState(initialSort);
  const [page, setPage] = useState(0);
  const sorted = useMemo(() => {
    const by = sort && columns[sort.column]?.sort;
    if (!by) return rows;
    const direction = sort.descending ? -1 : 1;
    return [...rows].sort((a, b) => {
      const [x, y] = [by(a), by(b)];
      return (x < y ? -1 : x > y ? 1 : 0) * direction;
    });
  }, [rows, sort, columns]);
  if (rows.length === 0) return <p class="empty">{empty}</p>;
  const pages = Math.ceil(sorted.length / pageSize);
  const current = Math.min(page, pages - 1);
  const shown = sorted.slice(current * pageSize, (current + 1) * pageSize);
  const toggle = (column: number) => setSort((s) => ({ column, descending: s?.column === column ? !s.descending : false }));
  return (
    <div class="table-wrap">
      <table aria-label={label}>
        <thead>
          <tr>
            {columns.map((column, i) => (
              <th class={column.className} aria-sort={sort?.column === i ? (sort.descending ? 'descending' : 'ascending') : undefined}>
                {column.sort ? (
                  <button type="button" class="sort" onClick={() => toggle(i)}>
                    {column.label}
                    <span class="arrow">{sort?.column === i ? (sort.descending ? '▼' : '▲') : '↕'}</span>
                  </button>
                ) : (
                  column.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {shown.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td class={column.className} data-label={column.label}>
                  {column.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {pages > 1 && (
        <nav class="pager" aria-label={`${label} pages`}>
          <button type="button" disabled={current === 0} onClick={() => setPage(current - 1)}>
            ← Previous
          </button>
          <span>
            Page {current + 1} of {pages} · {rows.length} rows
          </span>
          <button type="button" disabled={current >= pages - 1} onClick={() => setPage(current + 1)}>
            Next →
          </button>
        </nav>
      )}
    </div>
  );
}
