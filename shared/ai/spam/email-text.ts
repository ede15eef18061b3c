/**
 * Turns a raw RFC 5322 message (as in the SpamAssassin corpus) into the text a reader sees:
 * the Subject plus the decoded body, with headers, MIME structure and HTML stripped.
 *
 * Only the training script uses this. Headers are dropped on purpose: a forum post has none, and a
 * classifier that learned "Received: from korea.com" would be useless on posts.
 */
import { htmlToText, looksLikeHtml, normalizeWhitespace } from '../text/html-to-text.js';

interface Part {
  headers: Map<string, string>;
  body: string;
}

/** Nested multiparts deeper than this are spam tricks, not content. */
const MAX_DEPTH = 5;

export function emailToText(raw: string): string {
  const message = splitPart(raw.replace(/\r\n/g, '\n'));
  const subject = decodeEncodedWords(message.headers.get('subject') ?? '');
  const body = partText(message, 0);
  return normalizeWhitespace(`${subject}\n\n${body}`);
}

function splitPart(raw: string): Part {
  const end = raw.indexOf('\n\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? '' : raw.slice(end + 2);
  const headers = new Map<string, string>();
  // Folded header lines (starting with whitespace) continue the previous header.
  const unfolded = head.replace(/\n[ \t]+/g, ' ');
  for (const line of unfolded.split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function partText(part: Part, depth: number): string {
  const contentType = (part.headers.get('content-type') ?? 'text/plain').toLowerCase();
  if (contentType.startsWith('multipart/') && depth < MAX_DEPTH) {
    const boundary = /boundary\s*=\s*"?([^";]+)"?/i.exec(part.headers.get('content-type') ?? '')?.[1];
    if (!boundary) return '';
    const children = splitMultipart(part.body, boundary).map(splitPart);
    if (contentType.startsWith('multipart/alternative')) {
      // Alternatives repeat the same words; counting both would double their weight.
      const plain = children.find((c) =>
        (c.headers.get('content-type') ?? 'text/plain').toLowerCase().startsWith('text/plain'),
      );
      const chosen = plain ?? children[0];
      return chosen ? partText(chosen, depth + 1) : '';
    }
    return children.map((c) => partText(c, depth + 1)).join('\n\n');
  }
  if (!contentType.startsWith('text/')) return '';
  const decoded = decodeTransfer(part.body, part.headers.get('content-transfer-encoding') ?? '');
  return contentType.startsWith('text/html') || looksLikeHtml(decoded)
    ? htmlToText(decoded, { keepLinkTargets: true })
    : decoded;
}

function splitMultipart(body: string, boundary: string): string[] {
  const delimiter = `--${boundary}`;
  const sections = body.split(delimiter);
  // The first section is the preamble, a section starting with "--" is the epilogue.
  return sections
    .slice(1)
    .filter((s) => !s.startsWith('--'))
    .map((s) => s.replace(/^[ \t]*\n/, ''));
}

function decodeTransfer(body: string, encoding: string): string {
  const kind = encoding.trim().toLowerCase();
  if (kind === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('latin1');
  if (kind === 'quoted-printable') return decodeQuotedPrintable(body);
  return body;
}

export function decodeQuotedPrintable(body: string): string {
  return body
    .replace(/=\n/g, '')
    .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** RFC 2047 encoded words in the Subject, e.g. =?iso-8859-1?Q?Caf=E9?=. */
function decodeEncodedWords(header: string): string {
  return header.replace(/=\?[^?]+\?([bq])\?([^?]*)\?=/gi, (_m, kind: string, text: string) =>
    kind.toLowerCase() === 'b'
      ? Buffer.from(text, 'base64').toString('latin1')
      : decodeQuotedPrintable(text.replace(/_/g, ' ')),
  );
}
