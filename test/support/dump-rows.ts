import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SaxesParser } from 'saxes';

/** A Stack Exchange dump file's rows as attribute maps, parsed here independently of the importer. */
export function dumpRows(dir: string, file: string): Record<string, string>[] {
  const out: Record<string, string>[] = [];
  const parser = new SaxesParser();
  parser.on('opentag', (node) => {
    if (node.name === 'row') out.push(node.attributes as Record<string, string>);
  });
  parser.write(readFileSync(path.join(dir, file), 'utf8').replace(/^\uFEFF/, '')).close();
  return out;
}
