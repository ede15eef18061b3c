/** A GitHub-flavoured markdown table; numbers are right-aligned. */
export function markdownTable(header: string[], rows: Array<Array<string | number>>): string {
  const numeric = header.map((_, i) => rows.every((r) => typeof r[i] === 'number'));
  const line = (cells: Array<string | number>) => `| ${cells.map(String).join(' | ')} |`;
  const rule = `|${numeric.map((n) => (n ? '---:' : '---')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
