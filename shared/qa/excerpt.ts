import { decodeHTML } from 'entities';
import stem from 'wink-porter2-stemmer';

/**
 * Search excerpts: up to two fragments of a result's plain text around the words the search matched, as HTML in
 * which only our `<mark>` elements are markup (every entity of the stored text decoded, then everything escaped),
 * so a client can insert the excerpt as HTML.
 *
 * Cut here rather than by PostgreSQL's ts_headline: ts_headline parses and stems every word of every page row
 * inside the database, which was half of PostgreSQL's CPU per search. Here only the words that could match are
 * stemmed, with Porter2, the stemmer of PostgreSQL's `english` configuration, against the lexemes PostgreSQL made
 * of the query, so the marked words are the ones the search matched on.
 */

/** Words per fragment, and fragments per excerpt (ts_headline's MaxWords and MaxFragments as they were). */
const FRAGMENT_WORDS = 35;
const MAX_FRAGMENTS = 2;
// A fragment starts a few words before its first match, so the match is read in its sentence.
const LEAD_WORDS = 6;
const FRAGMENT_DELIMITER = ' ... ';

const escapeHtml = (text: string): string =>
  !/[&<>"']/.test(text)
    ? text
    : text.replace(
        /[&<>"']/g,
        (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
      );

// A word as PostgreSQL's parser sees one for stemming: letters and digits, possibly joined by an apostrophe.
const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

interface Word {
  start: number;
  end: number;
  matched: boolean;
}

// Porter2 keeps a word's first two letters, but for a "y" it may turn into "i" (dying → die, cry → cri).
const opening = (word: string): string => {
  const [a = '', b = ''] = word;
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

/** Matches a lower-case word against the query's lexemes; only words that open like a lexeme are stemmed. */
function matcher(lexemes: readonly string[]): (word: string) => boolean {
  const terms = new Set(lexemes);
  const openings = new Set(lexemes.map(opening));
  return (word) => {
    if (!openings.has(opening(word))) return false;
    const plain = word.replace(/’/g, "'");
    return terms.has(plain) || terms.has(stemOf(plain));
  };
}

/** Start and end word index (exclusive) of each fragment: windows led by the first match they hold. */
function fragments(words: readonly Word[]): [number, number][] {
  const found: [number, number][] = [];
  let from = 0;
  while (found.length < MAX_FRAGMENTS) {
    const next = words.findIndex((w, i) => i >= from && w.matched);
    if (next < 0) break;
    const start = Math.max(from, next - LEAD_WORDS);
    const end = Math.min(words.length, start + FRAGMENT_WORDS);
    found.push([start, end]);
    from = end;
  }
  return found.length > 0 ? found : [[0, Math.min(words.length, FRAGMENT_WORDS)]];
}

/**
 * The excerpt of `text` (a prefix of the post's plain text: tags stripped, entities as stored) for a search whose
 * query PostgreSQL turned into `lexemes` (to_tsvector of the query text).
 */
export function excerptOf(text: string, lexemes: readonly string[]): string {
  const plain = decodeHTML(text).replace(/\s+/g, ' ').trim();
  // Lower-cased once; a character whose lower case is longer (rare) puts the words' offsets out, so then per word.
  const lower = plain.toLowerCase();
  const lowerOf =
    lower.length === plain.length ? (start: number, end: number) => lower.slice(start, end) : null;
  const matches = matcher(lexemes);
  const words: Word[] = [];
  WORD.lastIndex = 0;
  for (let m = WORD.exec(plain); m; m = WORD.exec(plain)) {
    const start = m.index;
    const end = start + m[0].length;
    words.push({ start, end, matched: matches(lowerOf ? lowerOf(start, end) : m[0].toLowerCase()) });
  }
  if (words.length === 0) return escapeHtml(plain.slice(0, 200));
  return fragments(words)
    .map(([first, last]) => {
      // The text's own start and end keep what precedes its first word and follows its last.
      let at = first === 0 ? 0 : words[first]!.start;
      const end = last === words.length ? plain.length : words[last - 1]!.end;
      let html = '';
      for (let i = first; i < last; i++) {
        const word = words[i]!;
        if (!word.matched) continue;
        html += `${escapeHtml(plain.slice(at, word.start))}<mark>${escapeHtml(plain.slice(word.start, word.end))}</mark>`;
        at = word.end;
      }
      return html + escapeHtml(plain.slice(at, end));
    })
    .join(FRAGMENT_DELIMITER);
}
