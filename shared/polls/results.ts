import { percentages } from './percentages.js';

/** The spec's Poll result. */
export interface PollResults {
  total_votes: number;
  options: { id: number; text: string; votes: number; percentage: number }[];
}

/** Builds a result from the options in display order and a count per option id (missing means 0). */
export function pollResults(
  options: readonly { id: number; text: string }[],
  counts: (optionId: number) => number,
): PollResults {
  const votes = options.map((o) => counts(o.id));
  const shares = percentages(votes);
  return {
    total_votes: votes.reduce((sum, v) => sum + v, 0),
    options: options.map((o, i) => ({ id: o.id, text: o.text, votes: votes[i]!, percentage: shares[i]! })),
  };
}
