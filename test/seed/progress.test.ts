import { describe, expect, it } from 'vitest';
import { createProgress } from '../../shared/progress.js';

/** A stream that records what is written, terminal or not. */
function recorder(isTTY: boolean) {
  const chunks: string[] = [];
  const stream = { isTTY, write: (chunk: string) => chunks.push(chunk) } as unknown as NodeJS.WriteStream;
  return { stream, chunks };
}

describe('progress of a bulk load', () => {
  it('prints a plain line per interval off a terminal, with rows per table, rate, share and ETA', () => {
    const { stream, chunks } = recorder(false);
    const progress = createProgress({
      label: 'seeding',
      main: { table: 'questions', total: 1000 },
      stream,
      intervalMs: 0,
    });
    progress.add('users', 300);
    progress.add('questions', 250);
    progress.done();
    expect(chunks.length).toBe(3);
    expect(chunks[1]).toMatch(/^seeding 25% · ETA \S+ s · [\d,]+ rows\/s · users 300, questions 250\n$/);
    expect(chunks.every((c) => !c.includes('\r'))).toBe(true);
  });

  it('redraws one line on a terminal and ends it once', () => {
    const { stream, chunks } = recorder(true);
    const progress = createProgress({ label: 'importing', stream });
    progress.add('se_posts', 2000);
    progress.done();
    const last = chunks.at(-1)!;
    expect(last.startsWith('\r\u001b[2K')).toBe(true);
    expect(last.slice(5)).toMatch(/^importing · [\d,]+ rows\/s · se_posts 2,000\n$/);
  });

  it('draws a bar of the main table share on a terminal', () => {
    const { stream, chunks } = recorder(true);
    const progress = createProgress({ label: 'seeding', main: { table: 'questions', total: 400 }, stream });
    progress.add('questions', 100);
    progress.done();
    expect(chunks.at(-1)!.slice(5)).toMatch(
      /^seeding \[#{5}-{15}\] 25% · ETA \S+ s · [\d,]+ rows\/s · questions 100\n$/,
    );
  });

  it('names the step after the rows at once, then once per interval while it runs, until done', async () => {
    const { stream, chunks } = recorder(false);
    const progress = createProgress({ label: 'seeding', stream, intervalMs: 20 });
    progress.add('questions', 10);
    progress.step('recounting');
    expect(chunks.at(-1)).toMatch(/^seeding · [\d,]+ rows\/s · questions 10 · recounting \d+ s\n$/);
    const named = chunks.length;
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(chunks.length).toBeGreaterThan(named);
    expect(chunks.slice(named).every((c) => c.includes('· recounting '))).toBe(true);
    progress.step('analysing');
    expect(chunks.at(-1)).toMatch(/· analysing \d+ s\n$/);
    progress.done();
    expect(chunks.at(-1)).toMatch(/^seeding · [\d,]+ rows\/s · questions 10\n$/);
    const ended = chunks.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(chunks.length).toBe(ended);
  });

  it('prints nothing for a load that wrote nothing', () => {
    const { stream, chunks } = recorder(false);
    createProgress({ label: 'seeding', stream }).done();
    expect(chunks).toEqual([]);
  });
});
