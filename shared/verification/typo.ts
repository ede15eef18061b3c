import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * "Did you mean gmail.com?": the mail domain a typed domain most likely slipped from, by Damerau-Levenshtein distance
 * (optimal string alignment: insertions, deletions, substitutions and transpositions of neighbours each cost one)
 * against the popular domains (configurable, VERIFY_TYPO_DOMAINS) and `freemail`'s free-provider list, or a slip of the
 * TLD (`.con`, `.cmo`, `.co` → `.com`). This module only proposes; the verifier suggests a domain only when the typed
 * one receives no mail, or is a known typo-squat, and the proposed one does (docs/verification.md, "Typo suggestions").
 */

/** Mail domains most typed, most popular first: a tie of distance goes to the earlier one. Override: VERIFY_TYPO_DOMAINS. */
export const DEFAULT_TYPO_DOMAINS: readonly string[] = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'live.com',
  'msn.com',
  'googlemail.com',
  'ymail.com',
  'me.com',
  'mail.com',
  'gmx.com',
  'gmx.de',
  'web.de',
  'yandex.ru',
  'mail.ru',
  'proton.me',
  'protonmail.com',
  'comcast.net',
];

/** A typo domain of a popular mail provider that does receive mail, and the public reports that name it. */
export interface TypoSquat {
  domain: string;
  sources: readonly string[];
}

/**
 * Known typo-squats: near twins of popular mail domains that have mail hosts, so "receives no mail" never catches
 * them, and whose servers accept whatever is sent (mail meant for the twin is harvested, or used as a spam trap).
 * Only domains a public report names, each with the report. More: VERIFY_TYPO_SQUAT_DOMAINS (added to these).
 */
export const KNOWN_TYPO_SQUATS: readonly TypoSquat[] = [
  {
    // Blocked as malicious (flagged by Kaspersky on VirusTotal); a malware domain per Malwarebytes; has MX records.
    domain: 'gmial.com',
    sources: [
      'https://github.com/StevenBlack/hosts/issues/1683',
      'https://github.com/wesbos/burner-email-providers/issues/28',
      'https://github.com/liberapay/liberapay.com/issues/1255',
    ],
  },
  // Has MX records, so an MX check lets the typo through.
  { domain: 'gamil.com', sources: ['https://github.com/liberapay/liberapay.com/issues/1255'] },
  // Typos frequent enough to be among Firefox Accounts' top email domains, and both have MX records.
  { domain: 'gmil.com', sources: ['https://github.com/mozilla/fxa/issues/3478'] },
  { domain: 'gmai.com', sources: ['https://github.com/mozilla/fxa/issues/3478'] },
  // "Passes all checks, because they probably want to siphon emails with a typo".
  { domain: 'gmaila.com', sources: ['https://github.com/devmehq/email-validator-js/issues/148'] },
  // A spam-trap domain on MX hosts shared with other typo-looking domains, found in real sign-ups.
  { domain: 'prontonmail.com', sources: ['https://github.com/ivolo/disposable-email-domains/pull/818'] },
];

// TLDs a slip most likely meant (the three generic TLDs most mail domains use).
const COMMON_TLDS = ['com', 'net', 'org'];

const freeProviders: readonly string[] = readFileSync(
  createRequire(import.meta.url).resolve('freemail/data/free.txt'),
  'utf8',
)
  .split('\n')
  .map((line) => line.trim().toLowerCase())
  .filter(Boolean);

/** Damerau-Levenshtein distance, optimal string alignment variant, stopping early above `max` (returns max + 1). */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // Three rows: the one two back is needed for transpositions.
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}

export interface TypoSuggester {
  /** Likely intended domains for an ASCII domain, best first (at most two: a close provider, a TLD fix); [] when
   * the domain is itself a known mail domain or nothing is close enough. */
  candidates(domain: string): string[];
  /** Whether an ASCII domain is a known typo-squat (KNOWN_TYPO_SQUATS or the configured ones). */
  isKnownSquat(domain: string): boolean;
}

const normalized = (domains: readonly string[]) => domains.map((d) => d.trim().toLowerCase()).filter(Boolean);

/** `extraSquats` are added to KNOWN_TYPO_SQUATS (VERIFY_TYPO_SQUAT_DOMAINS). */
export function createTypoSuggester(
  popular: readonly string[] = DEFAULT_TYPO_DOMAINS,
  extraSquats: readonly string[] = [],
): TypoSuggester {
  const popularList = [...new Set(normalized(popular))];
  const squats = new Set(normalized([...KNOWN_TYPO_SQUATS.map((s) => s.domain), ...extraSquats]));
  // A squat a provider list happens to name (freemail lists some typo domains) is still a typo, never a target.
  const providers = freeProviders.filter((d) => !squats.has(d));
  const known = new Set([...popularList, ...providers]);
  const popularRank = new Map(popularList.map((d, i) => [d, i]));
  const others = providers.filter((d) => !popularRank.has(d));

  /** Closest known domain within the allowed edits; a tie between two providers that are not popular says nothing. */
  function closestProvider(domain: string): string | null {
    // One edit in a short domain changes too much of it (me.com ↔ mac.com are two real providers).
    const max = domain.length >= 8 ? 2 : 1;
    let best: string | null = null;
    let bestDistance = max + 1;
    for (const candidate of popularList) {
      const d = editDistance(domain, candidate, max);
      if (d < bestDistance) [best, bestDistance] = [candidate, d];
    }
    let tied = false;
    for (const candidate of others) {
      const d = editDistance(domain, candidate, Math.min(max, bestDistance));
      if (d < bestDistance) [best, bestDistance, tied] = [candidate, d, false];
      else if (d === bestDistance && best !== null && !popularRank.has(best)) tied = true;
    }
    return best !== null && !tied && bestDistance <= max ? best : null;
  }

  function tldFix(domain: string): string | null {
    const dot = domain.lastIndexOf('.');
    const tld = domain.slice(dot + 1);
    if (dot <= 0 || COMMON_TLDS.includes(tld)) return null;
    const fixed = COMMON_TLDS.find((t) => editDistance(tld, t, 1) <= 1);
    return fixed ? `${domain.slice(0, dot)}.${fixed}` : null;
  }

  return {
    candidates(domain) {
      const d = domain.toLowerCase();
      if (known.has(d)) return [];
      const found = [closestProvider(d), tldFix(d)].filter((c): c is string => c !== null);
      return [...new Set(found)];
    },
    isKnownSquat: (domain) => squats.has(domain.toLowerCase()),
  };
}
