/**
 * URL-safe slugs. A question's slug is made once from its title and never changes, so links stay valid
 * through edits; a taken slug gets the first free numeric suffix (`-2`, `-3`, …).
 */

const MAX_SLUG_LENGTH = 80;

/** Lower-case ASCII words joined by hyphens; accents are folded (é → e), anything else separates words. */
function words(text: string): string {
  const folded = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  const slug = folded.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  if (slug.length <= MAX_SLUG_LENGTH) return slug;
  // Cut at a word boundary when there is one.
  const cut = slug.slice(0, MAX_SLUG_LENGTH + 1);
  const boundary = cut.lastIndexOf('-');
  return (boundary > 0 ? cut.slice(0, boundary) : slug.slice(0, MAX_SLUG_LENGTH)).replace(/-+$/, '');
}

/** A question's slug base; never empty, never only digits (GET /questions/{id} would read that as an id). */
export function slugify(title: string): string {
  const slug = words(title);
  if (slug === '') return 'question';
  return /^[0-9]+$/.test(slug) ? `q-${slug}` : slug;
}

/** The first of `base`, `base-2`, `base-3`, … that is not in `taken`. */
export function firstFreeSlug(base: string, taken: Iterable<string>): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/** Tag slugs keep the meaning of the symbols tag names may hold (c# and c++ must not both become "c"). */
export function tagSlug(name: string): string {
  return words(name.replace(/#/g, '-sharp').replace(/\+/g, '-plus').replace(/\./g, '-dot-')) || 'tag';
}
