import { domainToASCII, domainToUnicode } from 'node:url';

/**
 * RFC 5321 mailbox syntax (with RFC 6531 UTF-8 local parts), decided without any network call.
 * Rules and their reasons are listed in docs/verification.md ("Syntax").
 */

export type SyntaxErrorCode =
  | 'empty'
  | 'no_at'
  | 'local_empty'
  | 'local_too_long'
  | 'local_invalid'
  | 'domain_empty'
  | 'address_literal'
  | 'domain_invalid'
  | 'label_too_long'
  | 'too_long'
  | 'unsafe_character';

export interface ParsedAddress {
  ok: true;
  /** The input, trimmed and NFC-normalised: what the result echoes. */
  email: string;
  /** Local part exactly as typed (case kept: RFC 5321 §2.4 lets the receiving host decide). */
  local: string;
  /** Lower-case ASCII (punycode) domain: what DNS and SMTP see. */
  domain: string;
  /** Lower-case Unicode form of the domain: what the result shows. */
  domainUnicode: string;
  quoted: boolean;
  /** The local part holds non-ASCII characters, so RCPT needs the server's SMTPUTF8. */
  smtputf8: boolean;
  /** `local@domain` with the ASCII domain: the address sent in RCPT TO and the dedup key. */
  address: string;
  /** `local@domainUnicode`: the address as it should be stored (the result's `normalized_email`). */
  normalized: string;
}

export interface SyntaxFailure {
  ok: false;
  email: string;
  /** Best-effort lower-case domain part ('' when there is none), so bad entries still group. */
  domain: string;
  error: SyntaxErrorCode;
}

export const MAX_LOCAL_OCTETS = 64;
export const MAX_ADDRESS_OCTETS = 254;
export const MAX_LABEL_OCTETS = 63;

// atext of RFC 5322 §3.2.3, extended by RFC 6531 with any non-ASCII character.
const ATOM = "[A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~\\u0080-\\u{10FFFF}]+";
const DOT_ATOM = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, 'u');
// qtextSMTP / quoted-pairSMTP of RFC 5321 §4.1.2 (plus UTF-8 per RFC 6531).
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10FFFF}]|\\[\x20-\x7e])+"$/u;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/;
// The ASCII a non-ASCII character may decompose into, per part: atext, quoted text (no quote, backslash or control),
// host name letters.
const ATEXT_ASCII = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~]$/;
const QUOTED_SAFE_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]$/;
const LDH_ASCII = /^[a-z0-9-]$/;

/**
 * Whether a non-ASCII character of `part` stands for ASCII the part may not hold: `≮` is `<` + U+0338 (NFC composes the
 * pair typed apart), `﹤` and `＜` are `<` under compatibility mapping. Such an address would be read as another one,
 * or as markup, by whatever decomposes it next, so it is refused rather than stored.
 */
function hidesUnsafeAscii(part: string, allowed: RegExp): boolean {
  for (const char of part) {
    if (!NON_ASCII.test(char)) continue;
    for (const piece of char.normalize('NFKD')) {
      if (!NON_ASCII.test(piece) && !allowed.test(piece)) return true;
    }
  }
  return false;
}

export function parseAddress(input: string): ParsedAddress | SyntaxFailure {
  const email = input.trim().normalize('NFC');
  const fail = (error: SyntaxErrorCode, domain = ''): SyntaxFailure => ({ ok: false, email, domain, error });
  if (email === '') return fail('empty');

  // The domain follows the last '@': a quoted local part may itself contain '@'.
  const at = email.lastIndexOf('@');
  if (at < 0) return fail('no_at');
  const local = email.slice(0, at);
  const rawDomain = email.slice(at + 1).toLowerCase();

  if (rawDomain === '') return fail('domain_empty');
  // Address literals (user@[192.0.2.1]) are legal SMTP but name no domain to check and
  // would let a caller aim the prober at any IP: refused.
  if (rawDomain.startsWith('[')) return fail('address_literal', rawDomain);

  if (local === '') return fail('local_empty', rawDomain);
  const quoted = local.startsWith('"');
  if (!(quoted ? QUOTED.test(local) : DOT_ATOM.test(local))) return fail('local_invalid', rawDomain);
  if (hidesUnsafeAscii(local, quoted ? QUOTED_SAFE_ASCII : ATEXT_ASCII))
    return fail('unsafe_character', rawDomain);
  const localOctets = Buffer.byteLength(local, 'utf8');
  if (localOctets > MAX_LOCAL_OCTETS) return fail('local_too_long', rawDomain);

  const domainCheck = checkDomain(rawDomain);
  if (!domainCheck.ok) return fail(domainCheck.error, rawDomain);
  const domain = domainCheck.ascii;
  // UTS #46 ToUnicode (WHATWG URL "domain to Unicode": nontransitional, i.e. IDNA 2008 compatible) of the A-labels:
  // mapped, lower-cased, NFC, so every spelling of one domain is stored one way.
  const domainUnicode = domainToUnicode(domain) || rawDomain;
  if (hidesUnsafeAscii(domainUnicode, LDH_ASCII)) return fail('unsafe_character', rawDomain);
  // The limit holds for both forms the address travels in: A-labels in plain SMTP, U-labels under SMTPUTF8 (RFC 6531
  // §3.3) and in the databases that store it. Octets, not characters: a combining mark is two or three of them.
  const octets = localOctets + 1 + Math.max(domain.length, Buffer.byteLength(domainUnicode, 'utf8'));
  if (octets > MAX_ADDRESS_OCTETS) return fail('too_long', rawDomain);
  return {
    ok: true,
    email,
    local,
    domain,
    domainUnicode,
    quoted,
    smtputf8: NON_ASCII.test(local),
    address: `${local}@${domain}`,
    normalized: `${local}@${domainUnicode}`,
  };
}

type DomainCheck = { ok: true; ascii: string } | { ok: false; error: SyntaxErrorCode };

/** Validates a host name after IDNA (UTS #46) conversion; returns its ASCII form. */
export function checkDomain(raw: string): DomainCheck {
  // A trailing root dot is legal in DNS but never in an address (RFC 5321 Domain grammar).
  if (raw.endsWith('.')) return { ok: false, error: 'domain_invalid' };
  // domainToASCII parses a URL host: it decodes %xx and drops tabs and line breaks, which would turn a malformed
  // domain into another, valid one. In a mail domain the only ASCII allowed are letters, digits, '-' and '.'.
  if (/[^A-Za-z0-9.\-\u0080-\uffff]/.test(raw)) return { ok: false, error: 'domain_invalid' };
  const ascii = domainToASCII(raw);
  if (ascii === '') return { ok: false, error: 'domain_invalid' };
  const labels = ascii.split('.');
  // A single label (localhost, intranet names) cannot be a public mail domain.
  if (labels.length < 2) return { ok: false, error: 'domain_invalid' };
  for (const label of labels) {
    if (label.length > MAX_LABEL_OCTETS) return { ok: false, error: 'label_too_long' };
    if (!LDH_LABEL.test(label)) return { ok: false, error: 'domain_invalid' };
  }
  // An all-numeric last label means a dotted IP written without brackets.
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) return { ok: false, error: 'domain_invalid' };
  return { ok: true, ascii };
}
