/**
 * Badge classes: 1 gold, 2 silver, 3 bronze. Newer dumps carry a `Class` attribute on each badge; older ones
 * (such as the beer excerpt) only the badge name, so the standard Stack Exchange badges are listed here.
 * A badge that is in neither (a tag badge, a site-specific one) counts as bronze, the commonest class.
 */
const GOLD = [
  'Famous Question',
  'Great Answer',
  'Great Question',
  'Electorate',
  'Fanatic',
  'Legendary',
  'Marshal',
  'Populist',
  'Reversal',
  'Steward',
  'Unsung Hero',
  'Illuminator',
  'Socratic',
  'Stellar Question',
  'Copy Editor',
  'Publicist',
  'Synonymizer',
  'Outspoken',
  'Lifeboat',
];
const SILVER = [
  'Good Answer',
  'Good Question',
  'Enthusiast',
  'Notable Question',
  'Civic Duty',
  'Strunk & White',
  'Yearling',
  'Necromancer',
  'Epic',
  'Guru',
  'Deputy',
  'Sportsmanship',
  'Taxonomist',
  'Favorite Question',
  'Booster',
  'Pundit',
  'Beta',
  'Convention',
  'Enlightened',
  'Precognitive',
  'Generalist',
  'Research Assistant',
  'Tenacious',
  'Archaeologist',
  'Explainer',
  'Refiner',
  'Cleanup',
  'Excavator',
];

const CLASS_BY_NAME = new Map<string, 1 | 2>([
  ...GOLD.map((n) => [n, 1] as [string, 1]),
  ...SILVER.map((n) => [n, 2] as [string, 2]),
]);

export function badgeClass(attributes: Record<string, string>): 1 | 2 | 3 {
  const explicit = Number(attributes.Class);
  if (explicit === 1 || explicit === 2 || explicit === 3) return explicit;
  return CLASS_BY_NAME.get(attributes.Name ?? '') ?? 3;
}
