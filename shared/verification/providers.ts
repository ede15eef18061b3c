/**
 * Providers whose RCPT answers are known not to mean what they say, and what we conclude instead (issue 20, item 4).
 * The catch-all probe stays the general mechanism; this table covers only what the probe cannot see: a provider that
 * accepts every RCPT and bounces later, or that refuses RCPT for mailboxes that exist. Matched on the name of the
 * mail host that answered (or the first MX), so custom domains hosted by the provider are covered too. Every entry
 * cites where the behaviour is published; docs/verification.md ("Provider table") lists them.
 */

export interface ProviderRule {
  name: string;
  /** Mail host names ending in one of these (after a dot, or equal) belong to the provider. */
  mxSuffixes: readonly string[];
  /**
   * `accepts_all`: a 250 to RCPT proves nothing (the bounce comes after DATA), so an accepted address is `risky` /
   * `accept_all_provider`, never `valid`. `refusals_unreliable`: a "no such mailbox" is given for mailboxes that
   * exist, so it is `unknown` / `unreliable_provider`, never `invalid`.
   */
  rcpt: 'accepts_all' | 'refusals_unreliable';
  sources: readonly string[];
}

export const PROVIDER_RULES: readonly ProviderRule[] = [
  {
    name: 'Yahoo Mail (yahoo.com, aol.com, and domains hosted there)',
    mxSuffixes: ['yahoodns.net'],
    rcpt: 'accepts_all',
    sources: [
      // swaks transcript: "250 recipient <…@yahoo.com> ok" for a mailbox that does not exist, refused only after DATA.
      'https://github.com/truemail-rb/truemail-go/issues/91',
      // Valid Yahoo addresses reported catch_all=true: RCPT verification "is not enough for yahoo".
      'https://github.com/AfterShip/email-verifier/issues/57',
      // Reacher stopped trusting SMTP for Yahoo and verifies through Yahoo's web flow instead.
      'https://github.com/reacherhq/check-if-email-exists/pull/412',
    ],
  },
  {
    name: 'Outlook.com / Hotmail consumer mailboxes',
    mxSuffixes: ['olc.protection.outlook.com'],
    rcpt: 'refusals_unreliable',
    sources: [
      // Existing outlook.com mailboxes verified as not deliverable through RCPT.
      'https://github.com/AfterShip/email-verifier/issues/55',
      // Same for hotmail.com (MX hotmail-com.olc.protection.outlook.com), still open.
      'https://github.com/AfterShip/email-verifier/issues/152',
    ],
  },
];

/** The table's rule for a mail host name, or null. */
export function providerRuleFor(mxHost: string | null | undefined): ProviderRule | null {
  if (!mxHost) return null;
  const host = mxHost.toLowerCase().replace(/\.$/, '');
  return (
    PROVIDER_RULES.find((rule) =>
      rule.mxSuffixes.some((suffix) => host === suffix || host.endsWith(`.${suffix}`)),
    ) ?? null
  );
}
