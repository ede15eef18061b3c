import { decodeHTML } from 'entities';
/**
 * Search excerpts are HTML with `<mark>` around the matched words. PostgreSQL's ts_headline works on the plain text
 * (tags stripped, entities left as they were), so the text between marks is decoded (every HTML entity, by
 * the `entities` library) and then escaped here: a
 * client can insert the excerpt as HTML and only our `<mark>` elements are markup.
 */

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Turns a ts_headline result (with literal `<mark>`/`</mark>` selectors) into safe HTML with only those marks. */
export function highlightExcerpt(headline: string): string {
  const text = (s: string) => escapeHtml(decodeHTML(s)).replace(/\s+/g, ' ');
  return headline
    .split(/(<mark>|<\/mark>)/)
    .map((part) => (part === '<mark>' || part === '</mark>' ? part : text(part)))
    .join('')
    .trim();
}
