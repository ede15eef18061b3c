import { escapeHtml } from '../html-escape.js';
import type { OutgoingMail } from '../mail/transport.js';
import type { DigestQuestion } from '../db/repositories/newsletter.js';
import type { Frequency } from './frequency.js';
import type { Period } from './period.js';

/** The two emails of the newsletter, each as HTML and plain text. Links are absolute, from PUBLIC_URL. */

export function newsletterLinks(publicUrl: string) {
  const base = publicUrl.replace(/\/+$/, '');
  return {
    confirm: (token: string) => `${base}/api/newsletter/confirm?token=${encodeURIComponent(token)}`,
    unsubscribe: (token: string) => `${base}/api/newsletter/unsubscribe?token=${encodeURIComponent(token)}`,
    // The API is the only thing this service serves; a question's API address works from any mail client.
    question: (q: Pick<DigestQuestion, 'slug'>) => `${base}/api/questions/${encodeURIComponent(q.slug)}`,
  };
}

export function confirmationMail(to: string, frequency: Frequency, confirmUrl: string): OutgoingMail {
  const subject = `Confirm your ${frequency} Agora digest`;
  const text = [
    `Someone (hopefully you) asked to receive the ${frequency} digest of Agora's best new questions at ${to}.`,
    '',
    'To confirm, open this link:',
    confirmUrl,
    '',
    'If this was not you, ignore this message: nothing will be sent without confirmation.',
    'The link expires in 7 days.',
  ].join('\n');
  const html = `<!doctype html><html><body>
<p>Someone (hopefully you) asked to receive the ${frequency} digest of Agora's best new questions at ${escapeHtml(to)}.</p>
<p><a href="${escapeHtml(confirmUrl)}">Confirm my subscription</a></p>
<p>If this was not you, ignore this message: nothing will be sent without confirmation. The link expires in 7 days.</p>
</body></html>`;
  return { to, subject, text, html };
}

/**
 * Question titles and tag names in the text part, on one line each. Titles written through the API are one line
 * already, but imported ones are stored as the dump has them: a line break in one would let it add lines of its
 * own to the message (a fake "Unsubscribe:" link).
 */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

const periodLabel = (period: Period) => {
  const day = period.start.toISOString().slice(0, 10);
  if (period.frequency === 'daily') return day;
  if (period.frequency === 'weekly') return `the week of ${day}`;
  return period.start.toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
};

export function digestMail(
  to: string,
  period: Period,
  questions: DigestQuestion[],
  links: { question: (q: DigestQuestion) => string; unsubscribe: string },
): OutgoingMail {
  const label = periodLabel(period);
  const subject = `Agora ${period.frequency} digest: best new questions of ${label}`;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const text = [
    `The best new questions of ${label}:`,
    '',
    ...questions.flatMap((q, i) => [
      `${i + 1}. ${oneLine(q.title)}`,
      `   ${count(q.votes, 'vote')}, ${count(q.answersCount, 'answer')}${q.tagNames.length ? ` · ${oneLine(q.tagNames.join(', '))}` : ''}`,
      `   ${links.question(q)}`,
      '',
    ]),
    `You receive this ${period.frequency} digest because you subscribed at Agora.`,
    `Unsubscribe: ${links.unsubscribe}`,
  ].join('\n');
  const items = questions
    .map(
      (q) =>
        `<li><a href="${escapeHtml(links.question(q))}">${escapeHtml(q.title)}</a><br><small>${count(q.votes, 'vote')}, ${count(q.answersCount, 'answer')}${
          q.tagNames.length ? ` · ${escapeHtml(q.tagNames.join(', '))}` : ''
        }</small></li>`,
    )
    .join('\n');
  const html = `<!doctype html><html><body>
<h1>The best new questions of ${escapeHtml(label)}</h1>
<ol>
${items}
</ol>
<p><small>You receive this ${period.frequency} digest because you subscribed at Agora.
<a href="${escapeHtml(links.unsubscribe)}">Unsubscribe</a></small></p>
</body></html>`;
  return {
    to,
    subject,
    text,
    html,
    // RFC 2369 + RFC 8058: mail clients show an "unsubscribe" button that POSTs to the URL, no login needed.
    headers: {
      'List-Unsubscribe': `<${links.unsubscribe}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}
