import { randomBytes } from 'node:crypto';

// RFC 4648 base32 alphabet in lower case: ids read well in URLs and logs, and carry no '-' or '_'.
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

/** 120 random bits as 24 base32 characters: a list id cannot be guessed or enumerated. */
export function newListId(): string {
  const bytes = randomBytes(15);
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** What a list id looks like; anything else cannot name a list (404 without a query). */
export const LIST_ID_PATTERN = /^[a-z2-7]{24}$/;
