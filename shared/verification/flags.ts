import mailchecker from 'mailchecker';
import freemail from 'freemail';
import roleNames from 'role-based-email-addresses';

/**
 * Address flags from maintained npm data packages (DESIGN.md: no hand-typed lists):
 * disposable from `mailchecker`, free providers from `freemail`, role names from
 * `role-based-email-addresses`. All take the ASCII (punycode) domain.
 */

const disposableDomains = mailchecker.blacklist();
const roles = new Set(roleNames.map((r) => r.toLowerCase()));

export interface AddressFlags {
  is_disposable: boolean;
  is_role_based: boolean;
  is_free_provider: boolean;
}

/** Disposable when the domain or any parent domain is listed (sub.mailinator.com counts). */
export function isDisposableDomain(domain: string): boolean {
  let current = domain.toLowerCase();
  for (;;) {
    if (disposableDomains.has(current)) return true;
    const dot = current.indexOf('.');
    if (dot < 0) return false;
    current = current.slice(dot + 1);
  }
}

/** Free webmail, but not disposable: the API reports the two separately. */
export function isFreeProviderDomain(domain: string): boolean {
  const probe = `x@${domain.toLowerCase()}`;
  return freemail.isFree(probe) && !freemail.isDisposable(probe) && !isDisposableDomain(domain);
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
