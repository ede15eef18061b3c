import { createInterface } from 'node:readline';

/**
 * JSON log lines made readable at a terminal: time, level, name, message, then the other fields; anything that is
 * not a JSON line passes unchanged. `npm run dev` (bin/dev.ts) shows its server's output this way; run alone, this
 * file reads stdin (`… | tsx bin/pretty-logs.ts`). Development only: production keeps the JSON lines, one object
 * per line, for the log collector.
 */
const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const colour = process.stdout.isTTY;

export function pretty(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || typeof entry.level !== 'number') return line;
  const { level, time, msg, name, pid: _pid, hostname: _hostname, ...rest } = entry;
  const when = typeof time === 'number' ? new Date(time).toISOString().slice(11, 23) : '';
  const label = LEVELS[level as number] ?? String(level);
  const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  const text = `${when} ${label} ${String(name ?? '')}: ${String(msg ?? '')}${extra}`;
  const tint = colour ? COLOURS[level as number] : undefined;
  return tint ? `${tint}${text}\x1b[0m` : text;
}

/** Writes every line of `input` to stdout, made readable. */
export function prettyPrint(input: NodeJS.ReadableStream): void {
  createInterface({ input, crlfDelay: Infinity }).on('line', (line) =>
    process.stdout.write(`${pretty(line)}\n`),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  prettyPrint(process.stdin);
  // Ctrl-C reaches the whole pipeline: this side ends when the server's output does.
  process.on('SIGINT', () => {});
}
