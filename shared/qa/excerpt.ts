import { decodeHTML } from 'entities';
import stem from 'wink-porter2-stemmer';
import { escapeHtml } from '../html-escape.js';

/**
 * Search excerpts: up to two fragments of a result's plain text around the words the search matched, as HTML in
 * which only our `<mark>` elements are markup (every entity of the stored text decoded, then everything escaped),
 * so a client can insert the excerpt as HTML.
 *
 * Cut here rather than by PostgreSQL's ts_headline: ts_headline parses and stems every word of every page row
 * inside the database, which was half of PostgreSQL's CPU per search. Here only the words that could match are
 * stemmed, with Porter2, the stemmer of PostgreSQL's `english` configuration, against the lexemes PostgreSQL made
 * of the query; a word the query itself contains is marked whatever its stem (another PostgreSQL version's stemmer
 * may differ on a few words), and stop words never are (PostgreSQL gives them no lexeme).
 */

/** Words per fragment, and fragments per excerpt (ts_headline's MaxWords and MaxFragments as they were). */
const FRAGMENT_WORDS = 35;
const MAX_FRAGMENTS = 2;
// A fragment starts a few words before its first match, so the match is read in its sentence.
const LEAD_WORDS = 6;
const FRAGMENT_DELIMITER = ' ... ';
// Text without a single word (punctuation only) is shown up to this many characters.
const WORDLESS_CHARS = 200;
// Porter2 takes at most a few letters off a word, and its cost grows with the square of the word's length: a longer
// word is only compared as it is.
const MAX_STEMMED_LENGTH = 64;

// PostgreSQL's english stop words (tsearch_data/english.stop): never lexemes, so never matched.
const STOP_WORDS = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers ' +
    'herself it its itself they them their theirs themselves what which who whom this that these those am is are ' +
    'was were be been being have has had having do does did doing a an the and but if or because as until while ' +
    'of at by for with about against between into through during before after above below to from up down in out ' +
    'on off over under again further then once here there when where why how all any both each few more most ' +
    'other some such no nor not only own same so than too very s t can will just don should now'
  ).split(' '),
);

// A token as PostgreSQL's parser keeps one whole (a decimal, a version, a host, a hyphenated word): runs of letters
// and digits joined by single punctuation marks. Its parts are the runs.
const TOKEN = /[\p{L}\p{N}]+(?:[.'’_\-/@][\p{L}\p{N}]+)*/gu;
const PART = /[\p{L}\p{N}]+/gu;
const DIGIT = /\p{N}/u;
// Runs of whitespace and control characters (no text a reader should get, nor valid in XML): one space each.
// eslint-disable-next-line no-control-regex
const BLANKS = /[\s\u0000-\u001f\u007f]+/g;

// Porter2 keeps a word's first two letters but for "dying", "lying" and "tying" (die, lie, tie): compared with
// every "y" read as "i".
// By UTF-16 code units, not code points: a prefix filter only, as loose for a word as for a lexeme.
const opening = (word: string): string => {
  const a = word.charAt(0);
  const b = word.charAt(1);
  return (a === 'y' ? 'i' : a) + (b === 'y' ? 'i' : b);
};

// Stems of the words seen lately: a site's vocabulary repeats, and stemming is the costly step.
const STEMS_KEPT = 20_000;
const stems = new Map<string, string>();
function stemOf(word: string): string {
  let stemmed = stems.get(word);
  if (stemmed === undefined) {
    if (stems.size >= STEMS_KEPT) stems.clear();
    stems.set(word, (stemmed = stem(word)));
  }
  return stemmed;
}

/** The lower-case words of a search text that it asks for (not the `-excluded` ones). */
function queryWords(query: string): string[] {
  return query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => !w.startsWith('-'))
    .flatMap((w) => w.match(TOKEN) ?? []);
}

/** How a search's words are found in a text. */
export interface Matcher {
  /** Whether a lower-case token or part matches: as it is, or (a word of letters) by its Porter2 stem. */
  matches(word: string): boolean;
  /**
   * Where in a text a match could begin, from a position on: the next start of a token or part (what follows a
   * joiner) whose opening is one a match can have; Infinity when there is none. Loose (a candidate may not match),
   * never past a match. Only candidates need matching: most of a text's words fail on their openings, and looking
   * at each of them was most of what an excerpt cost.
   */
  candidates(plain: string): (from: number) => number;
}

/** The matcher of one search (exported for its tests). */
export function matcher(lexemes: readonly string[], query: string): Matcher {
  const terms = new Set(lexemes);
  const exact = new Set([...lexemes, ...queryWords(query)]);
  const openings = new Set(lexemes.map(opening));
  const starts = startsOf([...exact].map(opening));
  return {
    // Cheapest tests first: most words of a text fail on their first two letters.
    matches(word) {
      if (STOP_WORDS.has(word)) return false;
      if (exact.has(word)) return true;
      if (!openings.has(opening(word)) || word.length > MAX_STEMMED_LENGTH || DIGIT.test(word)) return false;
      return terms.has(stemOf(word.replace(/’/g, "'")));
    },
    candidates(plain) {
      if (starts === null) return () => Infinity;
      const lowered = plain.toLowerCase();
      // Lower-casing keeps every character's position but a dotted capital I's (it becomes two): then every
      // position is a candidate.
      if (lowered.length !== plain.length) return (from) => (from < plain.length ? from : Infinity);
      const next = (from: number): number => {
        starts.lastIndex = from;
        const found = starts.exec(lowered);
        if (!found) return Infinity;
        // A search from inside a surrogate pair begins at the pair (Unicode mode): that one is behind us.
        return found.index >= from ? found.index : next(from + 1);
      };
      return next;
    },
  };
}

const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;
// In the text lower-cased whole, a token's opening is as the token lower-cased alone has it but for the final sigma
// (its form depends on what follows), and a "y" reads as the "i" that opening() made of it.
const LOOSE_CHARS: Readonly<Record<string, string>> = { i: '[iy]', σ: '[σς]', ς: '[σς]' };

/**
 * A pattern found wherever a token or a part of one begins with one of these openings, in a lower-cased text (no
 * character that is neither letter nor digit lower-cases to one); null when there is none (stop words only).
 */
function startsOf(openings: readonly string[]): RegExp | null {
  const alternatives = new Set<string>();
  for (const word of openings) {
    // By code points: an opening cut inside a surrogate pair keeps only its whole first character.
    const chars = Array.from(word).filter((c) => !/^[\uD800-\uDFFF]$/.test(c));
    if (chars.length === 0) continue;
    alternatives.add(chars.map((c) => LOOSE_CHARS[c] ?? c.replace(REGEX_SYNTAX, '\\$&')).join(''));
  }
  if (alternatives.size === 0) return null;
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${[...alternatives].join('|')})`, 'gu');
}

/** A token of the text: where it is, and the spans of it to mark (the whole token, or the parts that match). */
interface Word {
  start: number;
  end: number;
  marks: readonly (readonly [number, number])[];
}

const UNMARKED: Word['marks'] = [];
// By TOKEN's definition, the only characters of a token that are neither letters nor digits are its joiners.
const JOINER = /[.'’_\-/@]/;

/**
 * The text's tokens, read only as far as they are asked for: an excerpt needs the words up to the end of its last
 * fragment, usually a few dozen of the text's hundreds, and reading a token (matching, lower-casing, looking it up)
 * is most of an excerpt's cost.
 */
class Words {
  private readonly read: Word[] = [];
  private readonly pattern = new RegExp(TOKEN.source, TOKEN.flags);
  private done = false;
  private readonly candidateFrom: (from: number) => number;
  // The first candidate at or after the end of the last token read: tokens that end before it cannot match.
  private candidate: number;
  /** Whether anything in the text could match. */
  readonly mayMatch: boolean;

  constructor(
    private readonly plain: string,
    private readonly search: Matcher,
  ) {
    this.candidateFrom = search.candidates(plain);
    this.candidate = this.candidateFrom(0);
    this.mayMatch = this.candidate !== Infinity;
  }

  /** The i-th token, or undefined past the last. */
  at(i: number): Word | undefined {
    while (this.read.length <= i && !this.done) this.readOne();
    return this.read[i];
  }

  private readOne(): void {
    const token = this.pattern.exec(this.plain);
    if (!token) {
      this.done = true;
      return;
    }
    const start = token.index;
    const text = token[0];
    const end = start + text.length;
    let marks = UNMARKED;
    if (this.candidate < end) {
      marks = this.marksOf(text, start);
      this.candidate = this.candidateFrom(end);
    }
    this.read.push({ start, end, marks });
  }

  private marksOf(text: string, start: number): Word['marks'] {
    const lower = text.toLowerCase();
    if (this.search.matches(lower)) return [[start, start + text.length]];
    if (lower.length === 1 || !JOINER.test(lower)) return UNMARKED;
    const parts: [number, number][] = [];
    for (const part of text.matchAll(PART)) {
      if (this.search.matches(part[0].toLowerCase()))
        parts.push([start + part.index, start + part.index + part[0].length]);
    }
    return parts.length > 0 ? parts : UNMARKED;
  }
}

/**
 * Start and end word index (exclusive) of each fragment: windows led by the first match they hold. A fragment that
 * would start where the previous one ends continues it instead.
 */
function fragments(words: Words): [number, number][] {
  // A text whose match was in its title or tags only: its first words, without reading on for a match.
  if (!words.mayMatch) return [leading(words)];
  const found: [number, number][] = [];
  let from = 0;
  while (found.length < MAX_FRAGMENTS) {
    let next = from;
    for (let w = words.at(next); w && w.marks.length === 0; w = words.at(next)) next++;
    if (!words.at(next)) break;
    const start = Math.max(from, next - LEAD_WORDS);
    let end = start + FRAGMENT_WORDS;
    while (!words.at(end - 1)) end--;
    const previous = found.at(-1);
    if (previous && previous[1] === start) previous[1] = end;
    else found.push([start, end]);
    from = end;
  }
  return found.length > 0 ? found : [leading(words)];
}

/** The text's first fragment, when nothing in it matched (the match was in the title or tags). */
function leading(words: Words): [number, number] {
  let end = FRAGMENT_WORDS;
  while (end > 0 && !words.at(end - 1)) end--;
  return [0, end];
}

/**
 * The excerpts of one search `query`, whose lexemes PostgreSQL gave (to_tsvector of the query text): a function of
 * each result's text (a prefix of the post's plain text: tags stripped, entities as stored). The query's words are
 * read once for the whole page.
 */
export function excerpter(lexemes: readonly string[], query: string): (text: string) => string {
  const search = matcher(lexemes, query);
  return (text) => excerptFrom(text, search);
}

/** One text's excerpt for one search (excerpter, for a single text). */
export const excerptOf = (text: string, lexemes: readonly string[], query: string): string =>
  excerpter(lexemes, query)(text);

function excerptFrom(text: string, search: Matcher): string {
  const plain = decodeHTML(text).replace(BLANKS, ' ').trim();
  const words = new Words(plain, search);
  if (!words.at(0)) return escapeHtml(Array.from(plain).slice(0, WORDLESS_CHARS).join(''));
  return fragments(words)
    .map(([first, last]) => {
      // The text's own start and end keep what precedes its first word and follows its last.
      let at = first === 0 ? 0 : words.at(first)!.start;
      const end = words.at(last) ? words.at(last - 1)!.end : plain.length;
      let html = '';
      for (let i = first; i < last; i++) {
        for (const [from, to] of words.at(i)!.marks) {
          html += `${escapeHtml(plain.slice(at, from))}<mark>${escapeHtml(plain.slice(from, to))}</mark>`;
          at = to;
        }
      }
      return html + escapeHtml(plain.slice(at, end));
    })
    .join(FRAGMENT_DELIMITER);
}
