/**
 * What NODE_ENV=production refuses to start without. The development defaults (an embedded PGlite database, a
 * private Redis, a secret generated into the settings table, any admin token) are right on a laptop and wrong
 * on a server: a second replica would get its own database, and a short or stored secret is one leak away from
 * forged sessions and newsletter links. loadConfig() lists these with every other bad variable.
 */

/** Credentials are random strings; 32 characters of base64 or hex is at least 128 bits. */
export const MIN_CREDENTIAL_LENGTH = 32;

interface ProductionFacts {
  databaseUrl?: string;
  redisUrl?: string;
  redisClusterNodes?: readonly string[];
  appSecret?: string;
  adminToken?: string;
  metricsToken?: string;
}

export function productionProblems(config: ProductionFacts): string[] {
  const problems: string[] = [];
  const generate = '(generate one with `openssl rand -base64 48`)';
  if (!config.databaseUrl)
    problems.push(
      'DATABASE_URL: required in production; the embedded database serves one process on one machine',
    );
  if (!config.redisUrl && !config.redisClusterNodes?.length)
    problems.push(
      'REDIS_URL: required in production (or REDIS_CLUSTER_NODES for a Redis Cluster); a private Redis is a ' +
        'development convenience',
    );
  if (!config.appSecret)
    problems.push(
      `APP_SECRET: required in production, at least ${MIN_CREDENTIAL_LENGTH} characters ${generate}; ` +
        'it signs admin sessions and newsletter links and must not live in the database',
    );
  for (const [name, value] of [
    ['APP_SECRET', config.appSecret],
    ['ADMIN_TOKEN', config.adminToken],
    ['METRICS_TOKEN', config.metricsToken],
  ] as const) {
    if (value !== undefined && value.length < MIN_CREDENTIAL_LENGTH)
      problems.push(
        `${name}: ${value.length} characters; production needs at least ${MIN_CREDENTIAL_LENGTH} ${generate}`,
      );
  }
  return problems;
}

/** Outside production the same weaknesses only warn: a laptop may run on defaults, but should say so. */
export function developmentSecretWarnings(config: ProductionFacts & { env: string }): string[] {
  if (config.env === 'production') return [];
  const warnings: string[] = [];
  if (!config.appSecret)
    warnings.push(
      'APP_SECRET unset: using a secret generated into the settings table (refused in production)',
    );
  if (config.adminToken !== undefined && config.adminToken.length < MIN_CREDENTIAL_LENGTH)
    warnings.push(
      `ADMIN_TOKEN has ${config.adminToken.length} characters: production needs at least ${MIN_CREDENTIAL_LENGTH}`,
    );
  return warnings;
}
