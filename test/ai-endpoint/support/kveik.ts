import type { Database } from '../../../shared/db/client.js';
import { createAuthor, insertAnswer, insertQuestion } from './site.js';

/** Hand-written posts on kveik, a topic the beer dump never mentions: chat answers about it can only cite these. */
export interface KveikPosts {
  temperatureQuestion: number;
  temperatureTitle: string;
  acceptedAnswer: number;
  otherAnswer: number;
  dryingQuestion: number;
  dryingAnswer: number;
}

export async function insertKveikPosts(db: Database['db']): Promise<KveikPosts> {
  const author = await createAuthor(db, 'kveik-fan');
  const temperatureTitle = 'What temperature should I ferment kveik yeast at?';
  const temperatureQuestion = await insertQuestion(db, author, {
    title: temperatureTitle,
    content:
      'I bought a Voss kveik culture for my next farmhouse ale. What fermentation temperature does kveik yeast need?',
    tags: ['kveik', 'yeast', 'fermentation'],
    votes: 4,
  });
  const acceptedAnswer = await insertAnswer(db, author, {
    questionId: temperatureQuestion,
    content:
      'Kveik ferments cleanly at very high temperatures, between 30 and 40 degrees Celsius. ' +
      'Voss kveik pitched at 37 degrees finishes fermentation in two days and gives orange peel esters.',
    votes: 9,
    isAccepted: true,
  });
  const otherAnswer = await insertAnswer(db, author, {
    questionId: temperatureQuestion,
    content:
      'Pitch kveik warm. Unlike lager yeast, kveik yeast does not produce fusel alcohols at a high fermentation temperature.',
    votes: 2,
  });
  const dryingQuestion = await insertQuestion(db, author, {
    title: 'Can kveik yeast be dried and reused?',
    content:
      'After fermentation I have a thick kveik slurry at the bottom of the fermenter. Can I dry it and keep it for the next brew?',
    tags: ['kveik', 'yeast'],
  });
  const dryingAnswer = await insertAnswer(db, author, {
    questionId: dryingQuestion,
    content:
      'Yes, kveik yeast survives drying. Spread the slurry on baking paper, let it dry, and keep the flakes in the freezer for years.',
    votes: 5,
    isAccepted: true,
  });
  return { temperatureQuestion, temperatureTitle, acceptedAnswer, otherAnswer, dryingQuestion, dryingAnswer };
}
