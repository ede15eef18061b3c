/**
 * Whether a search text could be (part of) a user's name, so that `type=all` runs the user-name branch (trigram
 * matching over every user) only when it can find something a reader meant: a name is at most a few words of
 * letters, digits and the punctuation names carry, never web-search syntax ("a phrase", -excluded, `or`).
 * `type=users` always searches names, whatever the text.
 */
const MAX_NAME_WORDS = 3;
const MAX_NAME_LENGTH = 60;
const NAME_CHARACTERS = /^[\p{L}\p{N}\p{M} ._'’-]+$/u;

export function couldBeName(q: string): boolean {
  const text = q.trim();
  if (text.length === 0 || text.length > MAX_NAME_LENGTH || !NAME_CHARACTERS.test(text)) return false;
  const words = text.split(/\s+/);
  if (words.length > MAX_NAME_WORDS) return false;
  // web-search operators: a word that excludes (-word) or the `or` keyword between words
  return !words.some((w, i) => w.startsWith('-') || (i > 0 && w.toLowerCase() === 'or'));
}
