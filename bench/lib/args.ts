import { parseArgs } from 'node:util';

/**
 * A numeric command-line option clamped to [min, max], so that no option can make a bench unbounded.
 * (Not a number stays NaN, as `Number()` gives it.)
 */
export const clamp = (value: string | undefined, min: number, max: number): number =>
  Math.min(Math.max(Number(value), min), max);

/** [default, min, max] of a numeric option. */
export type NumericOption = readonly [defaultValue: number, min: number, max: number];

/**
 * Parses the bench's command line (strictly: an unknown option is an error): `--name value` for every numeric
 * option, clamped to its range, and for every string option (given with its default).
 */
export function parseBenchArgs<N extends string, S extends string = never>(
  numeric: Record<N, NumericOption>,
  strings: Record<S, string> = {} as Record<S, string>,
): Record<N, number> & Record<S, string> {
  const options: Record<string, { type: 'string'; default: string }> = {};
  for (const [name, [fallback]] of Object.entries<NumericOption>(numeric)) {
    options[name] = { type: 'string', default: String(fallback) };
  }
  for (const [name, fallback] of Object.entries<string>(strings)) {
    options[name] = { type: 'string', default: fallback };
  }
  const { values } = parseArgs({ options });
  const parsed: Record<string, number | string> = {};
  for (const [name, [, min, max]] of Object.entries<NumericOption>(numeric)) {
    parsed[name] = clamp(values[name] as string, min, max);
  }
  for (const name of Object.keys(strings)) parsed[name] = values[name] as string;
  return parsed as Record<N, number> & Record<S, string>;
}
