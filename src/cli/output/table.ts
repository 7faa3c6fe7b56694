// Aligned plain-text tables (kubectl style): upper-case headers, columns two spaces apart,
// numbers right-aligned. No colours, so output pipes cleanly into grep, awk and CI logs.
export interface Column<R> {
  header: string;
  value: (row: R) => string;
  align?: "left" | "right";
}

export function renderTable<R>(columns: readonly Column<R>[], rows: readonly R[]): string {
  const cells = rows.map((r) => columns.map((c) => c.value(r)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => {
        const last = i === values.length - 1;
        if (columns[i]!.align === "right") return v.padStart(widths[i]!);
        return last ? v : v.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n");
}
