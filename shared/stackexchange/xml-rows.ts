import { createReadStream } from 'node:fs';
import { SaxesParser } from 'saxes';

/**
 * Streams the `<row …/>` elements of a Stack Exchange dump file as attribute maps. saxes parses chunk by chunk
 * and the consumer's awaits pause the file stream, so a multi-gigabyte Posts.xml never sits in memory.
 */
export async function* readDumpRows(path: string): AsyncGenerator<Record<string, string>> {
  const parser = new SaxesParser();
  const pending: Record<string, string>[] = [];
  parser.on('opentag', (node) => {
    if (node.name === 'row') pending.push(node.attributes as Record<string, string>);
  });
  let first = true;
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
    // A byte-order mark before the XML declaration is legal in a file but not to saxes.
    parser.write(first ? (chunk as string).replace(/^\uFEFF/, '') : (chunk as string));
    first = false;
    yield* pending.splice(0);
  }
  parser.close();
  yield* pending.splice(0);
}

/** Dump dates are UTC without a zone designator ("2014-01-21T20:26:05.383"). */
export function dumpDate(value: string | undefined): Date | null {
  if (!value) return null;
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function dumpInt(value: string | undefined): number | null {
  if (value === undefined || value === '') return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && Math.abs(n) < 2 ** 31 ? n : null;
}

/** "<ale><ipa>" in older dumps, "|ale|ipa|" in newer ones. */
export function parseTagList(value: string | undefined): string[] {
  if (!value) return [];
  const inner = value.startsWith('<') ? value.slice(1, -1).split('><') : value.split('|');
  return [...new Set(inner.map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
}
