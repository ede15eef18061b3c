import { createHash } from 'node:crypto';
import type { Random } from './prng.js';
import type { Topic } from './topics.js';

const FIRST = [
  'Alice',
  'Bruno',
  'Chen',
  'Dana',
  'Emeka',
  'Fatima',
  'Giulia',
  'Hiro',
  'Ines',
  'Jonas',
  'Kavya',
  'Lars',
  'Maya',
  'Nikolai',
  'Olga',
  'Pedro',
  'Quinn',
  'Rosa',
  'Sam',
  'Tariq',
  'Uma',
  'Viktor',
  'Wen',
  'Ximena',
  'Yusuf',
  'Zoe',
  'Amara',
  'Ben',
  'Clara',
  'Diego',
  'Elif',
  'Finn',
  'Grace',
  'Hugo',
  'Ivy',
  'Jamal',
  'Kenji',
  'Lena',
  'Marco',
  'Nora',
  'Omar',
  'Priya',
  'Rafael',
  'Sofia',
  'Tomas',
  'Valentina',
  'Will',
  'Yara',
];
const LAST = [
  'Smith',
  'Garcia',
  'Nguyen',
  'Müller',
  'Rossi',
  'Kowalski',
  'Okafor',
  'Tanaka',
  'Silva',
  'Dubois',
  'Jensen',
  'Novak',
  'Haddad',
  'Kim',
  'Larsen',
  'Moreau',
  'Patel',
  'Ivanova',
  'Fischer',
  'Costa',
  'Sato',
  'Andersen',
  'Mensah',
  'Lopez',
  'Weber',
  'Ahmed',
  'Horvat',
  'Berg',
  'Castro',
  'Yilmaz',
];
const PLACES = [
  'Lisbon',
  'Portland',
  'Leeds',
  'Osaka',
  'Lyon',
  'Kraków',
  'Austin',
  'Melbourne',
  'Accra',
  'Toronto',
  'Bergen',
  'Bologna',
  'Cape Town',
  'Montréal',
  'Tallinn',
  'Valparaíso',
];
const JOBS = [
  'software developer',
  'teacher',
  'nurse',
  'retired engineer',
  'student',
  'chef',
  'librarian',
  'carpenter',
  'data analyst',
  'graphic designer',
  'farmer',
  'physicist',
  'bus driver',
  'translator',
];

export interface DemoUser {
  username: string;
  displayName: string;
  bio: string;
  avatar: string;
  reputation: number;
  gold: number;
  silver: number;
  bronze: number;
}

/** A Gravatar identicon: a real, stable image URL that needs no stored file. */
export const identicon = (key: string): string =>
  `https://www.gravatar.com/avatar/${createHash('md5').update(key).digest('hex')}?s=128&d=identicon`;

/** User number i (1-based); usernames are unique by construction (the number is part of them). */
export function makeUser(random: Random, i: number, topics: readonly Topic[]): DemoUser {
  const first = random.pick(FIRST);
  const last = random.pick(LAST);
  const displayName = random.chance(0.7) ? `${first} ${last}` : `${first}${random.int(1, 99)}`;
  const handle = `${first}${random.chance(0.5) ? `_${last}` : ''}`
    .toLowerCase()
    .normalize('NFD')
    .replace(/[^a-z_]/g, '');
  const username = `${handle}${i}`;
  const topic = random.pick(topics);
  const job = random.pick(JOBS);
  const bio = random.chance(0.25)
    ? ''
    : `${job[0]!.toUpperCase()}${job.slice(1)} from ${random.pick(PLACES)}. ` +
      `Interested in ${topic.name.toLowerCase()}, especially ${random.pick(topic.nouns)}` +
      `${random.chance(0.5) ? ` and ${random.pick(topic.nouns)}` : ''}.`;
  // Reputation has a long tail, as on real sites: most users have a little, a few have a lot.
  const reputation = 1 + Math.floor(10 * random.next() ** 6 * 20_000 + random.geometric(40));
  const scale = Math.log10(reputation + 1);
  return {
    username,
    displayName,
    bio,
    avatar: identicon(username),
    reputation,
    gold: scale > 3.5 ? random.int(0, Math.floor(scale)) : 0,
    silver: scale > 2 ? random.int(0, Math.floor(scale * 3)) : 0,
    bronze: random.int(0, Math.floor(scale * 6) + 1),
  };
}
