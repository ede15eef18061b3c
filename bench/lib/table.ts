type Cell = string | number;

const line = (cells: Cell[]) => `| ${cells.map(String).join(' | ')} |`;

/** A GitHub-flavoured markdown table; numbers are right-aligned. */
export function markdownTable(header: string[], rows: Cell[][]): string {
  const numeric = header.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const rule = `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** A GitHub-flavoured markdown table with every column left as markdown aligns it by default (`|---|`). */
export function plainMarkdownTable(header: string[], rows: Cell[][]): string {
  const rule = `|${header.map(() => '---').join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
