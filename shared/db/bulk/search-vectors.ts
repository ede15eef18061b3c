import { arrayLiteral } from './array-literal.js';
import type { BulkSession } from './session.js';

/**
 * The search vectors of migration 0017 (agora_question_vector, agora_answer_vector), computed in Node for bulk
 * loaders, which write with triggers off: to_tsvector is most of PostgreSQL's time in a seed, and seeded text
 * repeats a small vocabulary. PostgreSQL's parser never lets a token span ASCII whitespace (only `<…>` tags do,
 * and text holding `<` is refused below), so to_tsvector of a text is that of its whitespace-separated chunks,
 * each one's positions shifted by the positions the chunks before it consumed (stop words consume one too).
 * Each distinct chunk is asked of PostgreSQL once, in batches; the result is a tsvector literal, which PostgreSQL
 * sorts and deduplicates on input. Text this cannot reproduce exactly gets its vector from PostgreSQL instead.
 */

/** A chunk as to_tsvector sees it. */
interface Chunk {
  /** Pairs: a lexeme's id, then one of its positions relative to the chunk (1-based), in position order. */
  lexemes: number[];
  /** Positions the chunk uses up: the next chunk's first token is at this offset + 1. */
  consumed: number;
}

/** tsvector's limits (PostgreSQL's ts_type.h): past them it clamps or drops positions; such text is refused. */
const MAX_POSITION = 16383;
const MAX_POSITIONS_PER_LEXEME = 255;
/** agora_plain_text keeps this many characters (migration 0002). */
const PLAIN_TEXT_LIMIT = 100_000;

const WHITESPACE = /[\t\n\v\f\r ]+/;
// `<` may open a tag, which the parser reads as one token across spaces (and agora_plain_text strips); NUL is
// dropped by the bulk writers (copy-text.ts, array-literal.ts) before PostgreSQL sees the text.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNREPRODUCIBLE = /[<\u0000]/;
// A word no chunk can run into (a space separates them): its position, the last, tells how many the chunk used.
const SENTINEL = 'zzqsentinel';

/** Weights as tsvector literals spell them after a position (D, the default, is left out). */
const WEIGHTS = { A: 'A', B: 'B', C: 'C', D: '' } as const;
type Weight = keyof typeof WEIGHTS;
type Field = [text: string, weight: Weight];

const quote = (lexeme: string) => `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

export class SearchVectors {
  private readonly chunks = new Map<string, Chunk>();
  private readonly lexemeIds = new Map<string, number>();
  /** By lexeme id: the lexeme as a literal spells it before its position (`'wort':`). */
  private readonly prefixes: string[] = [];
  /** Each weight's positions as a literal spells them, by position. */
  private readonly spelled: Record<Weight, string[]> = { A: [], B: [], C: [], D: [] };
  /** Queries sent for unknown chunks, and vectors PostgreSQL computed whole: for tests and benches. */
  lookups = 0;
  fallbacks = 0;

  constructor(private readonly session: BulkSession) {}

  /** agora_question_vector(title, tag_names, content) as a tsvector literal. */
  async question(title: string, tagNames: readonly string[], content: string): Promise<string> {
    const vector = await this.vector([
      [title, 'A'],
      [tagNames.join(' '), 'B'],
      [content, 'C'],
    ]);
    if (vector !== undefined) return vector;
    const [row] = await this.session.query<{ v: string }>(
      'SELECT agora_question_vector($1, $2::text[], $3)::text AS v',
      [stripNul(title), arrayLiteral([...tagNames]), stripNul(content)],
    );
    return row!.v;
  }

  /** agora_answer_vector(content) as a tsvector literal. */
  async answer(content: string): Promise<string> {
    const vector = await this.vector([[content, 'D']]);
    if (vector !== undefined) return vector;
    const [row] = await this.session.query<{ v: string }>('SELECT agora_answer_vector($1)::text AS v', [
      stripNul(content),
    ]);
    return row!.v;
  }

  /** The vector of the fields, weighted and concatenated; undefined if it must come from PostgreSQL. */
  private async vector(fields: Field[]): Promise<string | undefined> {
    const split = fields.map(([text, weight]) => [text.split(WHITESPACE), weight] as const);
    let vector = fields.every(([text]) => reproducible(text)) ? this.build(split) : false;
    if (typeof vector !== 'string' && vector !== false) {
      await this.learn(vector.unknown);
      vector = this.build(split);
    }
    if (typeof vector === 'string') return vector;
    this.fallbacks++;
    return undefined;
  }

  /** Asks PostgreSQL, in one query, for chunks not seen yet. */
  private async learn(unknown: readonly string[]): Promise<void> {
    this.lookups++;
    const rows = await this.session.query<{ i: number; lexeme: string; positions: string }>(
      `SELECT c.i::int AS i, v.lexeme, array_to_string(v.positions, ',') AS positions
       FROM unnest($1::text[]) WITH ORDINALITY AS c(chunk, i),
            LATERAL unnest(to_tsvector('english', c.chunk || ' ${SENTINEL}')) AS v`,
      [arrayLiteral(unknown)],
    );
    const pairs = unknown.map(() => [] as Array<[lexeme: string, position: number]>);
    for (const row of rows) {
      for (const p of row.positions.split(',')) pairs[row.i - 1]!.push([row.lexeme, Number(p)]);
    }
    unknown.forEach((chunk, k) => {
      // The sentinel holds the last position; drop it (a chunk may hold the same word, at other positions).
      const sorted = pairs[k]!.sort((a, b) => a[1] - b[1]);
      const last = sorted.pop()![1];
      const lexemes: number[] = [];
      for (const [lexeme, position] of sorted) lexemes.push(this.lexemeId(lexeme), position);
      this.chunks.set(chunk, { lexemes, consumed: last - 1 });
    });
  }

  private lexemeId(lexeme: string): number {
    let id = this.lexemeIds.get(lexeme);
    if (id === undefined) {
      id = this.prefixes.length;
      this.lexemeIds.set(lexeme, id);
      this.prefixes.push(`${quote(lexeme)}:`);
    }
    return id;
  }

  /**
   * setweight(to_tsvector(field), weight) || … as PostgreSQL's tsvector_concat does it: each operand's positions
   * are shifted by the largest position of what precedes it (not by the positions it consumed: stop words at
   * the end of a title leave no gap). A lexeme is written once per position ('wort':3A 'wort':9C): PostgreSQL
   * merges them on input, and grouping them here cost more than the rest of the work. Returns the chunks to learn
   * first if some are unknown, and false where PostgreSQL could clamp or drop positions: past its largest position,
   * or with more positions in all than it keeps for one lexeme (simpler than counting per lexeme; seeded text
   * never comes near).
   */
  private build(
    fields: ReadonlyArray<readonly [chunks: string[], weight: Weight]>,
  ): string | false | { unknown: string[] } {
    let unknown: Set<string> | undefined;
    let out = '';
    let count = 0;
    let shift = 0;
    for (const [chunks, weight] of fields) {
      const spelled = this.spelled[weight];
      let offset = shift;
      for (const text of chunks) {
        const chunk = this.chunks.get(text);
        if (chunk === undefined) {
          if (text !== '') (unknown ??= new Set()).add(text);
          continue;
        }
        const lexemes = chunk.lexemes;
        for (let i = 0; i < lexemes.length; i += 2) {
          const position = offset + lexemes[i + 1]!;
          out += `${count++ === 0 ? '' : ' '}${this.prefixes[lexemes[i]!]!}${spelled[position] ?? (spelled[position] = `${position}${WEIGHTS[weight]}`)}`;
          if (position > shift) shift = position;
        }
        offset += chunk.consumed;
      }
    }
    if (unknown !== undefined) return { unknown: [...unknown] };
    return shift <= MAX_POSITION && count <= MAX_POSITIONS_PER_LEXEME ? out : false;
  }
}

const reproducible = (text: string) => text.length <= PLAIN_TEXT_LIMIT && !UNREPRODUCIBLE.test(text);

// eslint-disable-next-line no-control-regex -- matching NUL is the point
const stripNul = (text: string) => text.replace(/\u0000/g, '');
