/**
 * The tokenizer shared by spam training and prediction. It must stay byte-for-byte the same on
 * both sides: a change here means retraining (`npm run train:spam`), which is why the model file
 * records TOKENIZER_VERSION and loading a model of another version fails loudly.
 *
 * Regex-based rather than wink-nlp: training reads ~6,000 e-mails and the only thing that matters
 * is that the same text always yields the same tokens.
 */

export const TOKENIZER_VERSION = 1;

const URL_RE = /\b(?:https?:\/\/|www\.)[^\s<>"']+/gi;
const EMAIL_RE = /\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b/g;
const MONEY_RE = /[$€£]\s?\d[\d,.]*/g;
const WORD_RE = /[A-Za-z][A-Za-z']{1,24}/g;

/**
 * Pseudo-tokens stand for things whose exact spelling is noise (each URL is different) but whose
 * presence is a strong signal.
 */
export const PSEUDO = {
  url: '__url__',
  email: '__email__',
  money: '__money__',
  caps: '__caps__',
  bang: '__bang__',
} as const;

export function spamTokens(text: string): string[] {
  const tokens: string[] = [];
  let rest = text.replace(URL_RE, () => {
    tokens.push(PSEUDO.url);
    return ' ';
  });
  rest = rest.replace(EMAIL_RE, () => {
    tokens.push(PSEUDO.email);
    return ' ';
  });
  rest = rest.replace(MONEY_RE, () => {
    tokens.push(PSEUDO.money);
    return ' ';
  });
  for (const match of rest.matchAll(/!+/g)) {
    if (match[0].length > 0) tokens.push(PSEUDO.bang);
  }
  for (const match of rest.matchAll(WORD_RE)) {
    const word = match[0].replace(/'+$/, '');
    if (word.length < 2) continue;
    // Shouting is a signal of its own, kept alongside the lower-cased word.
    // Four letters or more: three-letter acronyms (IPA, ABV, IBU) are ordinary in posts.
    if (word.length >= 4 && word === word.toUpperCase()) tokens.push(PSEUDO.caps);
    tokens.push(word.toLowerCase());
  }
  return tokens;
}
