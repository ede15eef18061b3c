import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../shared/verification/syntax.js';
import { groupByDomain } from '../../shared/verification/verifier.js';

describe('parseAddress: accepted', () => {
  it.each([
    ['alice@example.com', 'alice', 'example.com'],
    ['  Alice.Smith@Example.COM\t', 'Alice.Smith', 'example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag', 'sub.example.co.uk'],
    ["o'brien!#$%&*/=?^_`{|}~-@example.com", "o'brien!#$%&*/=?^_`{|}~-", 'example.com'],
    ['"john doe"@example.com', '"john doe"', 'example.com'],
    ['"a@b"@example.com', '"a@b"', 'example.com'],
    ['"quote\\"inside"@example.com', '"quote\\"inside"', 'example.com'],
    ['user@xn--mnchen-3ya.de', 'user', 'xn--mnchen-3ya.de'],
    ['user@1example.com', 'user', '1example.com'],
    [`${'a'.repeat(64)}@example.com`, 'a'.repeat(64), 'example.com'],
  ])('%s', (input, local, domain) => {
    expect(parseAddress(input)).toMatchObject({ ok: true, local, domain, smtputf8: false });
  });

  it('converts an IDN domain to punycode and keeps its Unicode form for display', () => {
    expect(parseAddress('user@MÜNCHEN.de')).toMatchObject({
      ok: true,
      domain: 'xn--mnchen-3ya.de',
      domainUnicode: 'münchen.de',
      address: 'user@xn--mnchen-3ya.de',
    });
  });

  it('accepts a UTF-8 local part (RFC 6531) and marks it as needing SMTPUTF8', () => {
    expect(parseAddress('jörg@example.de')).toMatchObject({ ok: true, smtputf8: true });
    expect(parseAddress('用户@例子.广告')).toMatchObject({
      ok: true,
      smtputf8: true,
      domain: 'xn--fsqu00a.xn--4rr70v',
    });
  });

  it('normalises to NFC so composed and decomposed forms are one address', () => {
    const composed = parseAddress('jörg@example.de');
    const decomposed = parseAddress('jo\u0308rg@example.de');
    expect(composed.ok && decomposed.ok && composed.address === decomposed.address).toBe(true);
  });
});

describe('parseAddress: rejected', () => {
  const tooLongDomain = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.com`; // with 'alice@': 262 octets
  it.each([
    ['', 'empty'],
    ['   ', 'empty'],
    ['plainaddress', 'no_at'],
    ['@example.com', 'local_empty'],
    ['alice@', 'domain_empty'],
    ['a..b@example.com', 'local_invalid'],
    ['.alice@example.com', 'local_invalid'],
    ['alice.@example.com', 'local_invalid'],
    ['al ice@example.com', 'local_invalid'],
    ['a"b@example.com', 'local_invalid'],
    ['""@example.com', 'local_invalid'],
    ['a@b@example.com', 'local_invalid'],
    [`${'a'.repeat(65)}@example.com`, 'local_too_long'],
    ['alice@[192.0.2.1]', 'address_literal'],
    ['alice@[IPv6:2001:db8::1]', 'address_literal'],
    ['alice@192.0.2.1', 'domain_invalid'],
    ['alice@localhost', 'domain_invalid'],
    ['alice@example..com', 'domain_invalid'],
    ['alice@-example.com', 'domain_invalid'],
    ['alice@example-.com', 'domain_invalid'],
    ['alice@exa_mple.com', 'domain_invalid'],
    ['alice@example.com.', 'domain_invalid'],
    // A URL-host parser would decode or drop these and check another, valid domain (gmail.com, example.comquit).
    ['someone@gm%61il.com', 'domain_invalid'],
    ['someone@gmail%2ecom', 'domain_invalid'],
    ['someone@gm\nail.com', 'domain_invalid'],
    ['someone@gm\tail.com', 'domain_invalid'],
    ['a@example.com\r\nQUIT', 'domain_invalid'],
    ['a@exa mple.com', 'domain_invalid'],
    ['a@example.com/path', 'domain_invalid'],
    ['a@example.com:25', 'domain_invalid'],
    [`alice@${'a'.repeat(64)}.com`, 'label_too_long'],
    [`alice@${tooLongDomain}`, 'too_long'],
  ])('%j → %s', (input, error) => {
    expect(parseAddress(input)).toMatchObject({ ok: false, error });
  });
});

describe('groupByDomain', () => {
  it('groups by ASCII domain, keeps input positions, and puts bad syntax apart', () => {
    const groups = groupByDomain(['a@x.com', 'b@münchen.de', 'bad', 'c@X.com', 'd@xn--mnchen-3ya.de', 'e@']);
    expect(groups).toEqual([
      { domain: 'x.com', emails: ['a@x.com', 'c@X.com'], indexes: [0, 3] },
      { domain: 'xn--mnchen-3ya.de', emails: ['b@münchen.de', 'd@xn--mnchen-3ya.de'], indexes: [1, 4] },
      { domain: '', emails: ['bad', 'e@'], indexes: [2, 5] },
    ]);
  });
});
