/**
 * Search excerpts are HTML with `<mark>` around the matched words. PostgreSQL's ts_headline works on the plain text
 * (tags stripped, entities left as they were), so the text between marks is decoded and then escaped here: a
 * client can insert the excerpt as HTML and only our `<mark>` elements are markup.
 */

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  '#39': "'",
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8}|#39);/gi, (entity, name: string) => {
    const lower = name.toLowerCase();
    if (lower in NAMED) return NAMED[lower]!;
    const code = lower.startsWith('#x')
      ? Number.parseInt(lower.slice(2), 16)
      : lower.startsWith('#')
        ? Number(lower.slice(1))
        : NaN;
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
      ? String.fromCodePoint(code)
      : entity;
  });
}

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Turns a ts_headline result (with literal `<mark>`/`</mark>` selectors) into safe HTML with only those marks. */
export function highlightExcerpt(headline: string): string {
  const text = (s: string) => escapeHtml(decodeEntities(s)).replace(/\s+/g, ' ');
  return headline
    .split(/(<mark>|<\/mark>)/)
    .map((part) => (part === '<mark>' || part === '</mark>' ? part : text(part)))
    .join('')
    .trim();
}
