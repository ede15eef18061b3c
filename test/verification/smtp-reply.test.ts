import { describe, expect, it } from 'vitest';
import {
  classifyReply,
  isTooManyRecipients,
  parseReply,
  type ReplyClass,
} from '../../shared/verification/smtp-reply.js';

// Replies as real servers send them (texts collected from bounce logs and provider docs).
const TABLE: Array<[string, string, ReplyClass]> = [
  // Gmail
  ['gmail accepted', '250 2.1.5 OK 5b1f17b1804b1-42a8c6', 'accepted'],
  [
    'gmail no such user',
    "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550-5.1.1 double-checking the recipient's email address for typos or\n550 5.1.1 unnecessary spaces. https://support.google.com/mail/?p=NoSuchUser",
    'mailbox_not_found',
  ],
  [
    'gmail disabled',
    '550-5.2.1 The email account that you tried to reach is disabled.\n550 5.2.1 https://support.google.com/mail/?p=DisabledUser',
    'mailbox_disabled',
  ],
  [
    'gmail over quota',
    '452-4.2.2 The email account that you tried to reach is over quota. Please direct\n452 4.2.2 the recipient to https://support.google.com/mail/?p=OverQuotaTemp',
    'mailbox_full',
  ],
  [
    'gmail rate limited recipient',
    '450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n450 4.2.1 prevents additional messages from being delivered.',
    'temporary_failure',
  ],
  [
    'gmail unsolicited mail',
    '550-5.7.1 [203.0.113.9] Our system has detected an unusual rate of\n550 5.7.1 unsolicited mail originating from your IP address.',
    'blocked',
  ],
  [
    'gmail 421 rate limit',
    '421-4.7.0 [203.0.113.9] Our system has detected an unusual rate of\n421 4.7.0 unsolicited mail originating from your IP address.',
    'blocked',
  ],
  // Outlook / Exchange Online
  [
    'outlook mailbox unavailable',
    '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [AM0PR01MB1234.eurprd01.prod.exchangelabs.com]',
    'mailbox_not_found',
  ],
  [
    'exchange recipient not found',
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    'mailbox_not_found',
  ],
  [
    'exchange DBEB access denied',
    '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]',
    'mailbox_not_found',
  ],
  [
    'outlook banned IP',
    '550 5.7.606 Access denied, banned sending IP [203.0.113.9]. To request removal from this list please visit https://sender.office.com/',
    'blocked',
  ],
  [
    'exchange S3150 blocklist',
    "550 5.7.1 Unfortunately, messages from [203.0.113.9] weren't sent. Please contact your Internet service provider since part of their network is on our block list (S3150).",
    'blocked',
  ],
  // Yahoo / AOL
  [
    'yahoo no account',
    "554 delivery error: dd This user doesn't have a yahoo.com account (someone@yahoo.com) [0] - mta1004.mail.gq1.yahoo.com",
    'mailbox_not_found',
  ],
  [
    'yahoo deferred',
    '421 4.7.0 [TSS04] Messages from 203.0.113.9 temporarily deferred due to unexpected volume or user complaints',
    'blocked',
  ],
  [
    'yahoo spamhaus',
    "553 5.7.1 [BL21] Connections will not be accepted from 203.0.113.9, because the ip is in Spamhaus's list",
    'blocked',
  ],
  [
    'aol disabled',
    '554 30 Sorry, your message to someone@aol.com cannot be delivered. This mailbox is disabled (554.30)',
    'mailbox_disabled',
  ],
  ['old aol address rejected', '550 #5.1.0 Address rejected.', 'mailbox_not_found'],
  // Postfix
  [
    'postfix unknown user',
    '550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in virtual mailbox table',
    'mailbox_not_found',
  ],
  [
    'postfix local recipient table',
    '550 5.1.1 <bob@example.org>: Recipient address rejected: User unknown in local recipient table',
    'mailbox_not_found',
  ],
  [
    'postfix mailbox full',
    '552 5.2.2 <bob@example.org>: Recipient address rejected: Mailbox full',
    'mailbox_full',
  ],
  [
    'postgrey',
    '450 4.2.0 <bob@example.org>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.org.html',
    'greylisted',
  ],
  ['postfix relay denied', '554 5.7.1 <bob@elsewhere.org>: Relay access denied', 'blocked'],
  [
    'postfix unverified (temporary)',
    '450 4.1.1 <bob@example.org>: Recipient address rejected: unverified address: connect to backend timed out',
    'temporary_failure',
  ],
  [
    'postfix RBL',
    '554 5.7.1 Service unavailable; Client host [203.0.113.9] blocked using zen.spamhaus.org',
    'blocked',
  ],
  [
    'postfix sender domain',
    '550 5.1.8 <probe@agora.test>: Sender address rejected: Domain not found',
    'blocked',
  ],
  ['postfix helo', '504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname', 'blocked'],
  // Exim, qmail, sendmail and friends (often without enhanced codes)
  ['exim unrouteable', '550 Unrouteable address', 'mailbox_not_found'],
  ['exim unknown user', '550 unknown user', 'mailbox_not_found'],
  ['exim greylist', '451 Temporary local problem - please try again later', 'greylisted'],
  ['exim ACL', '550 Administrative prohibition', 'blocked'],
  ['qmail rcpthosts', "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)", 'blocked'],
  ['sendmail user unknown', '550 5.1.1 <bob@example.org>... User unknown', 'mailbox_not_found'],
  ['bare 550', '550 Requested action not taken: mailbox unavailable', 'mailbox_not_found'],
  ['bare 552', '552 Requested mail action aborted: exceeded storage allocation', 'mailbox_full'],
  ['quota phrase', '522 5.0.0 Recipient over quota', 'mailbox_full'],
  ['deactivated phrase', '550 5.0.0 This account has been deactivated', 'mailbox_disabled'],
  ['syntax error', '501 5.5.4 Syntax error in parameters', 'rejected'],
  ['cannot verify but will accept', '252 2.1.5 Cannot VRFY user, but will accept message', 'accepted'],
  ['too many recipients', '452 4.5.3 Too many recipients', 'temporary_failure'],
  // RFC 5321's text for 452, and RFC 3463's X.3.1: the server's storage, not the mailbox's
  ['server storage', '452 4.3.1 Insufficient system storage', 'temporary_failure'],
  ['bare server storage', '452 Requested action not taken: insufficient system storage', 'temporary_failure'],
];

describe('classifyReply', () => {
  it.each(TABLE)('%s', (_label, wire, expected) => {
    expect(classifyReply(parseReply(wire.split('\n')))).toBe(expected);
  });

  it('never reads a x.7.x code as a missing mailbox, whatever the words', () => {
    expect(classifyReply(parseReply(['550 5.7.1 User unknown']))).toBe('blocked');
  });
});

describe('parseReply', () => {
  it('joins multi-line text, keeps the first enhanced code and the last line code', () => {
    const reply = parseReply(['250-mx.example.org at your service', '250-PIPELINING', '250 STARTTLS']);
    expect(reply).toEqual({
      code: 250,
      enhanced: null,
      text: 'mx.example.org at your service PIPELINING STARTTLS',
      raw: '250-mx.example.org at your service\n250-PIPELINING\n250 STARTTLS',
    });
    expect(parseReply(['550-5.1.1 first', '550 5.1.1 second'])).toMatchObject({
      enhanced: '5.1.1',
      text: 'first second',
    });
  });

  it('recognises a per-transaction recipient limit', () => {
    expect(isTooManyRecipients(parseReply(['452 4.5.3 Too many recipients']))).toBe(true);
    expect(isTooManyRecipients(parseReply(['452 4.2.2 Mailbox full']))).toBe(false);
    // RFC 5321 §4.5.3.1.10: a 552 for too many recipients is to be treated as a 452
    expect(isTooManyRecipients(parseReply(['552 5.5.3 Too many recipients']))).toBe(true);
    expect(isTooManyRecipients(parseReply(['552 5.2.2 Mailbox full']))).toBe(false);
  });
});
