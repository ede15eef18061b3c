import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/**
 * The content contract (docs/writes.md, "Content"): `content` is always safe HTML. Writes take Markdown
 * (CommonMark, markdown-it); we store the source (`content_markdown`) and its rendering, sanitised with the one
 * allow-list below. Imported Stack Exchange posts are HTML already and go through the same allow-list on import.
 * A client may insert `content` into a page as it is: no script, no event handler, no javascript: URL survives.
 */

// Roughly what Stack Exchange lets through: text formatting, lists, quotes, code, headings, tables, links, images.
const ALLOWED: sanitizeHtml.IOptions = {
  allowedTags: [
    'p',
    'br',
    'hr',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'blockquote',
    'pre',
    'code',
    'kbd',
    'sup',
    'sub',
    'strong',
    'b',
    'em',
    'i',
    's',
    'del',
    'strike',
    'ul',
    'ol',
    'li',
    'dl',
    'dt',
    'dd',
    'a',
    'img',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
    'span',
    'div',
  ],
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    th: ['align'],
    td: ['align'],
    ol: ['start'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: true,
  // Scripts and styles are dropped with their text; any other tag outside the list is dropped, its text kept.
  disallowedTagsMode: 'discard',
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow noopener' }) },
};

const markdown = new MarkdownIt('commonmark', { html: true, linkify: false });

/** Any HTML, reduced to the allow-list. */
export const sanitizePostHtml = (html: string): string => sanitizeHtml(html, ALLOWED);

/** A post's Markdown source and its safe HTML rendering. */
export interface RenderedPost {
  markdown: string;
  html: string;
}

export const renderPost = (source: string): RenderedPost => ({
  markdown: source,
  html: sanitizePostHtml(markdown.render(source)).trim(),
});

/** Comments are one paragraph of inline Markdown (emphasis, code, links), as on Stack Exchange. */
export const renderComment = (source: string): RenderedPost => ({
  markdown: source,
  html: sanitizePostHtml(markdown.renderInline(source)).trim(),
});

/** Plain text (an imported comment, a title) as HTML: escaped, nothing else. */
export const textToHtml = (text: string): string =>
  sanitizeHtml(text, { allowedTags: [], allowedAttributes: {} });
