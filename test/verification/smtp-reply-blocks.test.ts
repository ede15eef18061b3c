import { describe, expect, it } from 'vitest';
import { classifyReply, parseReply, type ReplyClass } from '../../shared/verification/smtp-reply.js';

/*
 * Blocks read as missing mailboxes (issue 20, item 7). Each reply below is copied as published at the source named
 * beside it (placeholders such as xxx, *** or [IP] are the publisher's); none is made up. A reply about our sender,
 * our message, our host or our rate must read as `blocked` (unknown, never invalid) even as a bare 550; a reply
 * about the mailbox keeps reading as a missing (or disabled) mailbox.
 */

const QQ = 'https://smtp.codes/qq (QQ Mail codes, each linking its service.mail.qq.com help page)';
const QQ_LIST = 'http://qiao.yimirj.com/article/detail/2261 (QQ Mail bounce codes, in Chinese)';
const QQ_IP =
  'https://www.computersolutions.cn/blog/qq-mail-550-ip-frequency-limited-errors-and-how-to-solve-them/';
const HOTMAIL =
  'https://foxpa.ws/e-mails-to-hotmail-bounce-550-sc-001-part-of-your-network-is-on-our-block-list';
const HOTMAIL_2 =
  'https://support.binarylane.com.au/support/solutions/articles/11000047583-emails-to-hotmail-and-outlook-are-blocked';
const CN_CODES =
  "https://blog.sina.com.cn/s/blog_8dc13ec50101fxxr.html (a Chinese mail system's reply codes)";
const MAILRU = 'https://help.ishosting.com/en/dmarc-check (mail.ru DMARC rejection)';
const GMAIL =
  'https://www.plesk.com/kb/support/plesk-notifications-cannot-be-delivered-to-the-recipient-550-5-7-1-or-550-5-7-26-this-message-does-not-have-authentication-information/';
const NOT_EXIST =
  'https://www.dbmailserver.com/tui-xin-address-not-exist.htm (a collection of "address does not exist" bounces)';
const YAHOO = 'http://help.yahoo.com/l/in/yahoo/mail/original/abuse/abuse-57.html (Yahoo help)';
const DISABLED = 'http://help.szhot.com/text_show.php?id=170 (bounce examples for "disabled")';

const TABLE: Array<[string, ReplyClass, string]> = [
  // Blocks of the prober, most of them bare 550s.
  [
    '550 Mail content denied. http://service.exmail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000726',
    'blocked',
    QQ,
  ],
  [
    '550 Sender frequency limited. http://service.exmail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000723',
    'blocked',
    QQ,
  ],
  [
    '550 DMARC check failed http://service.mail.qq.com/cgi-bin/help?subtype=1&&no=1001508&&id=16.',
    'blocked',
    QQ,
  ],
  ['550 Suspected spam sender.', 'blocked', QQ],
  ['550 Mail is rejected by recipients', 'blocked', QQ],
  ['550 Domain frequency limited', 'blocked', QQ_LIST],
  ['550 Connection frequency limited', 'blocked', QQ_LIST],
  [
    '550 Ip frequency limited. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000725',
    'blocked',
    QQ_IP,
  ],
  [
    "550 SC-001 (BAY0-MC4-F36) Unfortunately, messages from xxx.xxx.xxx.xxx weren't sent. Please contact your Internet service provider since part of their network is on our block list. You can also refer your provider to http://mail.live.com/mail/troubleshooting.aspx#errors.",
    'blocked',
    HOTMAIL,
  ],
  [
    '550 SC-001 Mail rejected by Hotmail for policy reasons. Reasons for rejection may be related to content with spam-like characteristics or IP/domain reputation. If you are not an email/network admin please contact your Email/Internet Service Provider for help.',
    'blocked',
    HOTMAIL,
  ],
  [
    "550 SC-001 (BAY004-MC4F49) Unfortunately, messages from \nweren't sent. Please contact your Internet service provider since part of \ntheir network is on our block list. You can also refer your provider to ",
    'blocked',
    HOTMAIL_2,
  ],
  ['550 black ip.', 'blocked', CN_CODES],
  ['553 host denies the sender.', 'blocked', CN_CODES],
  ['554 rbl deny.', 'blocked', CN_CODES],
  ['552 message rejected by anti-spam engine.', 'blocked', CN_CODES],
  ['554 sender is unvalidated.', 'blocked', CN_CODES],
  ['556 remote ip check error.', 'blocked', CN_CODES],
  [
    '550 5.7.1\nThis message was not accepted due to domain (mail.ru)\nowner DMARC policy (RFC 7489) https://help.mail.ru/mail-help/postmaster/dmarc',
    'blocked',
    MAILRU,
  ],
  [
    '550-5.7.26 This message does not have authentication information or fails to 550-5.7.26 pass authentication checks. To best protect our users from spam, the 550-5.7.26 message has been blocked. Please visit 550-5.7.26 https://support.google.com/mail/answer/81126#authentication for more 550 5.7.26 information.',
    'blocked',
    GMAIL,
  ],

  // Missing mailboxes, also bare: they must stay invalid.
  [
    '550 Mailbox not found. http://service.mail.qq.com/cgi-bin/help?subtype=1&&id=20022&&no=1000728',
    'mailbox_not_found',
    NOT_EXIST,
  ],
  ['550 User not found: 12345@163.com', 'mailbox_not_found', NOT_EXIST],
  ['550 RC:LD The email account that you tried to reach does no exists.', 'mailbox_not_found', NOT_EXIST],
  ['550 abcd:user not exist', 'mailbox_not_found', NOT_EXIST],
  ['550 Local User [xxx@123.com] not found.', 'mailbox_not_found', NOT_EXIST],
  ['550 #2175041 unavailable mail user', 'mailbox_not_found', NOT_EXIST],
  ['550 RC:NE The email account does not exist.', 'mailbox_not_found', NOT_EXIST],
  ['550 no such user here (umail mta)', 'mailbox_not_found', NOT_EXIST],
  ['550 Requested action not taken: mailbox unavailable', 'mailbox_not_found', NOT_EXIST],
  ['550 mailbox unavailable.', 'mailbox_not_found', CN_CODES],
  [
    "554 delivery error: dd This user doesn't have a yahoo.com account ({recipients'userid}@yahoo.com).",
    'mailbox_not_found',
    YAHOO,
  ],

  // Disabled mailboxes.
  ['550 user is locked.', 'mailbox_disabled', CN_CODES],
  ['550 is now disabled with SMTP service.', 'mailbox_disabled', DISABLED],
];

describe('classifyReply on published real replies: blocks of the prober vs missing mailboxes', () => {
  it.each(TABLE)('%s → %s', (wire, expected) => {
    expect(classifyReply(parseReply(wire.split('\n')))).toBe(expected);
  });

  it('cites a source for every reply', () => {
    for (const [, , source] of TABLE) expect(source).toMatch(/^https?:\/\//);
  });
});
