/**
 * HTML to plain text, for e-mail bodies (spam training) and Stack Exchange post bodies (tag
 * evaluation). Deliberately regex-based: the inputs are either machine-generated (Stack Exchange)
 * or hostile spam markup we only need words from, so a forgiving scan beats a strict parser that
 * would give up on broken tags.
 */

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  rsquo: '’',
  lsquo: '‘',
  rdquo: '”',
  ldquo: '“',
  eacute: 'é',
  euro: '€',
  pound: '£',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      // Invalid or out-of-range code points are dropped rather than throwing on hostile input.
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole;
  });
}

/** Block-level tags become line breaks so that sentences and code lines stay apart. */
const BLOCK_TAG = /<\/?(p|div|br|li|ul|ol|tr|td|th|table|h[1-6]|pre|blockquote|hr|center)\b[^>]*>/gi;

export interface HtmlToTextOptions {
  /** Keep the href of links as text, so that link-counting features still see them. */
  keepLinkTargets?: boolean;
}

export function htmlToText(html: string, options: HtmlToTextOptions = {}): string {
  let text = html.replace(/<!--[\s\S]*?-->/g, ' ').replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, ' ');
  if (options.keepLinkTargets) {
    text = text.replace(/<a\b[^>]*?href\s*=\s*["']?([^"'\s>]+)["']?[^>]*>/gi, ' $1 ');
  }
  text = text.replace(BLOCK_TAG, '\n').replace(/<[^>]*>/g, ' ');
  return normalizeWhitespace(decodeEntities(text));
}

export function normalizeWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function looksLikeHtml(text: string): boolean {
  return /<(html|body|p|div|br|table|font|a)\b/i.test(text);
}
