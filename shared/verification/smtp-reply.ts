/**
 * SMTP replies: parsing (multi-line aware) and classification of an RCPT/MAIL answer into what
 * it says about the mailbox. Order of evidence: the enhanced status code (RFC 3463) when it is
 * specific, then the text's phrases, then the bare basic code, the least specific of the three.
 */

export interface SmtpReply {
  code: number;
  /** RFC 3463 code like "5.1.1", or null when the server sent none. */
  enhanced: string | null;
  /** Text of all lines joined with a space, enhanced codes removed. */
  text: string;
  /** The reply as received, lines joined with "\n": kept as evidence. */
  raw: string;
}

export type ReplyClass =
  | 'accepted'
  | 'mailbox_not_found'
  | 'mailbox_disabled'
  | 'mailbox_full'
  | 'blocked'
  | 'greylisted'
  | 'temporary_failure'
  | 'rejected';

const ENHANCED = /^#?([245])\.(\d{1,3})\.(\d{1,3})(?:\s+|$)/;

/** Builds a reply from its lines ("250-first", "250 last"); the code of the last line counts. */
export function parseReply(lines: readonly string[]): SmtpReply {
  const last = lines[lines.length - 1] ?? '';
  const code = Number.parseInt(last.slice(0, 3), 10);
  let enhanced: string | null = null;
  const texts: string[] = [];
  for (const line of lines) {
    let text = line.slice(4);
    const match = ENHANCED.exec(text);
    if (match) {
      enhanced ??= `${match[1]}.${match[2]}.${match[3]}`;
      text = text.slice(match[0].length);
    }
    if (text !== '') texts.push(text.trim());
  }
  return { code: Number.isNaN(code) ? 0 : code, enhanced, text: texts.join(' '), raw: lines.join('\n') };
}

// Phrases of real servers (Postfix, Exim, Exchange, Gmail, Yahoo…); matched case-insensitively.
const GREYLIST = /grey ?list|gray ?list|greylisted|try again later|please retry|come back later/i;
const BLOCK =
  /spamhaus|spamcop|barracuda|sorbs|\bdnsbl\b|\brbl\b|block ?list|black ?list|blocked|listed at|listed on|reputation|\bspam\b|banned|policy|prohibit|not authori[sz]ed|relay(ing)? (access )?denied|allowed rcpthosts|client host rejected|sender address rejected|helo command rejected|ptr record|reverse dns|rdns/i;
// Replies about our sender, our message, our host or our rate: the authentication checks (SPF, DKIM, DMARC), content
// and spam filters, frequency limits (QQ's "Sender frequency limited"), Microsoft's "messages from <ip> weren't sent".
// Checked before the mailbox phrases: real providers send these as bare 550s (test/verification/smtp-reply-blocks.test.ts).
const PROBER =
  /\b(spf|dkim|dmarc)\b|unauthenticated|authentication (check|fail)|frequency limit|rate limit|too many (connections|messages|mails)|sending (quota|rate)|content (denied|rejected|reject)|(mail|message)s? (is |was |has been )?(rejected|denied|refused|not accepted)|weren't sent|black ?ip|\brbl\b|(sender|host) denies|denies the sender|(ip|sender|client|host) (is |was |has been )?(rejected|denied|blocked|not allowed)|fake sender|invalid ip/i;
// Words about us, weaker than PROBER: they count only when the reply says nothing about the mailbox.
const ABOUT_US =
  /\b(ip|ips|sender|helo|ehlo|client host|connection|your (server|host|domain|message|mail))\b/i;
const DISABLED =
  /disabled|deactivated|inactive|suspended|no longer (active|in use)|account (has been )?(closed|locked|expired)|(user|mailbox) (is |has been )?locked|frozen/i;
const FULL =
  /mailbox (is )?full|over ?quota|quota exceeded|exceeded (the )?(storage|quota)|out of storage|mailbox size limit/i;
const NOT_FOUND =
  /user unknown|unknown user|no such (user|mailbox|recipient|address|account)|(does not|doesn't|did not) exist|not exist|unknown (recipient|mailbox|address|local part)|invalid (recipient|mailbox|address)|recipient (not found|unknown|rejected|invalid)|mailbox (unavailable|not found|does not exist)|address (rejected|unknown|not found)|user not found|not a valid (mailbox|recipient)|undeliverable address|no mailbox|unrouteable address|unknown or illegal alias|not our customer|account (does not|doesn't) exist|(does not|doesn't) have an? [\w.-]* ?account/i;

/** What an RCPT (or MAIL FROM) reply says about the mailbox, see docs/verification.md. */
export function classifyReply(reply: SmtpReply): ReplyClass {
  const { code, text } = reply;
  if (code >= 200 && code < 300) return 'accepted';
  const permanent = code >= 500 && code < 600;

  // Greylisting is announced in words, often under a 4.7.x code that would otherwise read as a block.
  if (!permanent && GREYLIST.test(text)) return 'greylisted';

  const fromEnhanced = classifyEnhanced(reply.enhanced, permanent);
  if (fromEnhanced) return fromEnhanced;

  if (BLOCK.test(text) || PROBER.test(text)) return 'blocked';
  if (FULL.test(text)) return 'mailbox_full';
  if (!permanent) return 'temporary_failure';
  if (DISABLED.test(text)) return 'mailbox_disabled';
  if (NOT_FOUND.test(text)) return 'mailbox_not_found';
  // A bare 5xx naming neither the mailbox nor a known block but speaking of us ("550 black ip", "553 host denies the
  // sender") refuses the prober: unknown, never invalid.
  if (ABOUT_US.test(text)) return 'blocked';

  // Basic codes (RFC 5321 §4.2.3): 550/551/553 are about the mailbox itself, 552 its storage.
  if (code === 550 || code === 551 || code === 553) return 'mailbox_not_found';
  if (code === 552) return 'mailbox_full';
  return 'rejected';
}

function classifyEnhanced(enhanced: string | null, permanent: boolean): ReplyClass | null {
  if (enhanced === null) return null;
  const [, subject, detail] = enhanced.split('.').map(Number);
  if (subject === 7) return 'blocked'; // security or policy: a refusal of the prober, never of the mailbox
  if (subject === 1 && (detail === 7 || detail === 8)) return 'blocked'; // our sender address refused
  if (subject === 2 && detail === 2) return 'mailbox_full'; // 4.2.2 and 5.2.2 alike
  // X.3.x is the mail system (4.3.1: the server's own storage is full), not the mailbox.
  if (subject === 3 && !permanent) return 'temporary_failure';
  if (!permanent) return null; // 4.1.1 & co. may clear up: let phrases or the 4xx default decide
  if (subject === 1 && detail !== 0) return 'mailbox_not_found';
  if (subject === 2 && detail === 1) return 'mailbox_disabled';
  return null; // x.0.0 and the rest say too little: fall through to phrases
}

/**
 * RFC 5321 §4.5.3.1.10: the server wants fewer recipients per transaction, not a verdict. Some servers say so with
 * a 552, which the client is to treat as a 452.
 */
export function isTooManyRecipients(reply: SmtpReply): boolean {
  if (reply.code !== 452 && reply.code !== 552) return false;
  return reply.enhanced === '4.5.3' || reply.enhanced === '5.5.3' || /too many recipients/i.test(reply.text);
}
