import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import mailchecker from 'mailchecker';
import roleNames from 'role-based-email-addresses';

/**
 * Address flags from maintained npm data packages (DESIGN.md: no hand-typed lists):
 * disposable from `mailchecker`, free providers from `freemail`, role names from
 * `role-based-email-addresses`. All take the ASCII (punycode) domain.
 */

const disposableDomains = mailchecker.blacklist();
// freemail's own isFree()/isDisposable() scan an array of ~92k domains on every call (a quarter of a verify worker's
// CPU in bench/verify); its data files, read once into sets, answer in constant time.
const freemailList = (file: string): Set<string> =>
  new Set(
    readFileSync(createRequire(import.meta.url).resolve(`freemail/data/${file}`), 'utf8')
      .split('\n')
      .map((line) => line.trim().toLowerCase())
      .filter(Boolean),
  );
const freemailFree = freemailList('free.txt');
const freemailDisposable = freemailList('disposable.txt');
const roles = new Set(roleNames.map((r) => r.toLowerCase()));

export interface AddressFlags {
  is_disposable: boolean;
  is_role_based: boolean;
  is_free_provider: boolean;
}

/** Whether the domain or one of its parent domains is in the set (sub.mailinator.com counts as mailinator.com). */
function listed(set: ReadonlySet<string>, domain: string): boolean {
  let current = domain.toLowerCase();
  for (;;) {
    if (set.has(current)) return true;
    const dot = current.indexOf('.');
    if (dot < 0) return false;
    current = current.slice(dot + 1);
  }
}

/** Disposable when the domain or any parent domain is listed by mailchecker. */
export function isDisposableDomain(domain: string): boolean {
  return listed(disposableDomains, domain);
}

/** Free webmail, but not disposable: the API reports the two separately. */
export function isFreeProviderDomain(domain: string): boolean {
  return listed(freemailFree, domain) && !listed(freemailDisposable, domain) && !isDisposableDomain(domain);
}

/** Role accounts (info@, support@, postmaster@…) reach a team, not a person. A `+tag` and
 * surrounding quotes do not change the role: "sales+eu" is still sales. */
export function isRoleLocalPart(local: string): boolean {
  const bare = local.replace(/^"|"$/g, '').toLowerCase();
  const base = bare.split('+')[0] ?? bare;
  return roles.has(bare) || roles.has(base);
}

export function addressFlags(local: string, domain: string): AddressFlags {
  return {
    is_disposable: isDisposableDomain(domain),
    is_role_based: isRoleLocalPart(local),
    is_free_provider: isFreeProviderDomain(domain),
  };
}
