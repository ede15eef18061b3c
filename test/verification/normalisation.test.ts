import { domainToASCII, domainToUnicode } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../shared/verification/syntax.js';

/*
 * normalized_email and the syntax rules about normalisation. The domain goes through node's url.domainToASCII /
 * domainToUnicode: the WHATWG URL Standard's "domain to ASCII/Unicode" (https://url.spec.whatwg.org/#idna), which is
 * UTS #46 processing (https://www.unicode.org/reports/tr46/) with Transitional_Processing=false, i.e. IDNA 2008
 * behaviour for the deviation characters. The first block shows those UTS #46 properties, so that the claim is
 * checked on every Node upgrade rather than assumed.
 */

describe('url.domainToASCII/domainToUnicode implement UTS #46 nontransitional processing', () => {
  it.each([
    // UTS #46 §4 "Processing", step 1 (Map): case folding, compatibility mappings, the ideographic full stop.
    ['MÜNCHEN.de', 'xn--mnchen-3ya.de', 'münchen.de'],
    ['ＥＸＡＭＰＬＥ。ｃｏｍ', 'example.com', 'example.com'],
    ['ﬁ.de', 'fi.de', 'fi.de'],
    // Deviation characters (UTS #46 §2.3, Table 3): nontransitional keeps ß and ς (IDNA 2008), transitional would
    // turn faß.de into fass.de.
    ['faß.de', 'xn--fa-hia.de', 'faß.de'],
    ['βόλος.com', 'xn--nxasmm1c.com', 'βόλος.com'],
    ['βόλοσ.com', 'xn--nxasmq6b.com', 'βόλοσ.com'],
  ])('%s → %s → %s', (input, ascii, unicode) => {
    expect(domainToASCII(input)).toBe(ascii);
    expect(domainToUnicode(ascii)).toBe(unicode);
  });

  it('refuses what UTS #46 makes invalid (a label starting with a combining mark, a broken A-label)', () => {
    expect(domainToASCII('\u0301a.com')).toBe('');
    expect(domainToASCII('xn--a.com')).toBe('');
  });
});

describe('normalized: the address as it should be stored', () => {
  it.each([
    // Local part as typed, case kept (RFC 5321 §2.4); domain lower-cased, in Unicode.
    ['Alice.Smith@Example.COM', 'Alice.Smith@example.com'],
    ['user@xn--mnchen-3ya.de', 'user@münchen.de'],
    ['User@MÜNCHEN.DE', 'User@münchen.de'],
    ['Jörg@ＥＸＡＭＰＬＥ。ｃｏｍ', 'Jörg@example.com'],
    ['x@xn--fa-hia.de', 'x@faß.de'],
    // NFC: the decomposed ö of the local part is composed.
    ['jo\u0308rg@example.de', 'jörg@example.de'],
    ['"John Doe"@Example.com', '"John Doe"@example.com'],
  ])('%s → %s', (input, normalized) => {
    expect(parseAddress(input)).toMatchObject({ ok: true, normalized });
  });
});

describe('lengths are counted in octets after normalisation', () => {
  // x + U+0301 has no precomposed form: NFC leaves it two code points, three UTF-8 octets.
  const marked = (n: number): string => 'x\u0301'.repeat(n);

  it('counts a local part with combining marks in octets', () => {
    expect(parseAddress(`${marked(21)}@example.com`)).toMatchObject({ ok: true }); // 63 octets, 42 code points
    expect(parseAddress(`${marked(22)}@example.com`)).toMatchObject({ ok: false, error: 'local_too_long' }); // 66
  });

  it('counts the address in the octets of its Unicode domain, not only of its punycode', () => {
    // Four labels of 20 marked letters: 60 UTF-8 octets each, 247 for the domain, but 195 once punycoded.
    const label = marked(20);
    const domain = `${label}.${label}.${label}.${label}.com`;
    expect(domainToASCII(domain).length).toBeLessThan(254 - 11);
    expect(parseAddress(`${'a'.repeat(10)}@${domain}`)).toMatchObject({ ok: false, error: 'too_long' });
    expect(parseAddress(`a@${label}.${label}.${label}.com`)).toMatchObject({ ok: true });
  });
});

describe('a character that normalises into something unsafe is rejected', () => {
  it.each([
    // '<' followed by U+0338: NFC composes the pair into U+226E '≮', whose decomposition is '<' again.
    ['a<\u0338b@example.com', 'unsafe_character'],
    ['a\u226eb@example.com', 'unsafe_character'],
    // Compatibility forms of '<' and '@' (small and fullwidth).
    ['x\ufe64@example.com', 'unsafe_character'],
    ['x\uff20y@example.com', 'unsafe_character'],
    ['user@a\u226eb.com', 'unsafe_character'],
  ])('%s', (input, error) => {
    expect(parseAddress(input)).toMatchObject({ ok: false, error });
  });

  it('keeps what decomposes into safe ASCII, and "<" inside quotes, where it is legal', () => {
    expect(parseAddress('ﬁle@example.com')).toMatchObject({ ok: true, local: 'ﬁle' });
    expect(parseAddress('élodie@example.com')).toMatchObject({ ok: true });
    expect(parseAddress('"a\u226eb"@example.com')).toMatchObject({ ok: true });
  });
});
