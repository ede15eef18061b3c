/**
 * Progress of a long bulk load (seed, import): rows written per table, the rate and, when the size of the main
 * table is known, an ETA. On a terminal one line is redrawn in place, with a bar when the share is known;
 * otherwise (CI, logs) a plain line is printed every interval, so a long load is never silent.
 */
export interface Progress {
  /** Counts rows written to a table. */
  add(table: string, rows: number): void;
  /**
   * Names the work that follows the rows (building indexes, recounting): a line at once, then one per interval
   * with the step's time, until the next step or done, so a step that writes no rows is not silent either.
   */
  step(name: string): void;
  /** Prints the final line. */
  done(): void;
}

export interface ProgressOptions {
  label: string;
  /** The table whose expected row count drives the percentage and the ETA. */
  main?: { table: string; total: number };
  stream?: NodeJS.WriteStream;
  /** Between two plain lines when the stream is not a terminal. */
  intervalMs?: number;
}

const number = (n: number) => n.toLocaleString('en-US');
const BAR_WIDTH = 20;
const bar = (share: number) => {
  const filled = Math.round(share * BAR_WIDTH);
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
};

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
}

export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const interval = tty ? 200 : (options.intervalMs ?? 5000);
  const started = performance.now();
  const rows = new Map<string, number>();
  let last = started;
  let current: { name: string; since: number; timer: NodeJS.Timeout } | undefined;

  const line = (): string => {
    const seconds = (performance.now() - started) / 1000;
    const written = [...rows.values()].reduce((a, b) => a + b, 0);
    const parts = [...rows].map(([table, n]) => `${table} ${number(n)}`);
    let head = options.label;
    if (options.main) {
      const done = rows.get(options.main.table) ?? 0;
      const share = Math.min(1, done / Math.max(1, options.main.total));
      const eta = share > 0 ? (seconds * (1 - share)) / share : Infinity;
      head += `${tty ? ` ${bar(share)}` : ''} ${Math.floor(share * 100)}% · ETA ${duration(eta)}`;
    }
    const rate = seconds > 0 ? Math.round(written / seconds) : 0;
    const step = current ? ` · ${current.name} ${duration((performance.now() - current.since) / 1000)}` : '';
    return `${head} · ${number(rate)} rows/s · ${parts.join(', ')}${step}`;
  };

  const print = (final: boolean) => {
    if (tty) stream.write(`\r\x1b[2K${line()}${final ? '\n' : ''}`);
    else stream.write(`${line()}\n`);
  };

  const endStep = () => {
    if (current) clearInterval(current.timer);
    current = undefined;
  };

  return {
    step(name) {
      endStep();
      // Unreferenced: a load that fails without calling done() must not be kept alive by its progress line.
      const timer = setInterval(() => print(false), interval).unref();
      current = { name, since: performance.now(), timer };
      print(false);
    },
    add(table, n) {
      rows.set(table, (rows.get(table) ?? 0) + n);
      const now = performance.now();
      if (now - last >= interval) {
        last = now;
        print(false);
      }
    },
    done() {
      endStep();
      if (rows.size > 0) print(true);
    },
  };
}
