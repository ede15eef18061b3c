/**
 * Which links in a post body name one of our questions: an href (post bodies are sanitised HTML, attributes in
 * double quotes) to `/questions/<id>` (or `/api/questions/<id>`), relative or on our own public host, followed by
 * the end of the path, a slug, a query or a fragment. Links to other sites' /questions/ pages are not ours.
 */
export function questionLinkPattern(publicUrl: string): string {
  const host = new URL(publicUrl).host.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `href="(?:https?://${host})?/(?:api/)?questions/([0-9]{1,10})(?=[/?#"])`;
}
