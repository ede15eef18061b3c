import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../shared/config.js';

describe('configuration', () => {
  it('runs on embedded defaults with no variables at all', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.redisUrl).toBeUndefined();
    expect(config.qaPort).toBe(3000);
    expect(config.verifyPort).toBe(3001);
    expect(config.verify.smtpPort).toBe(25);
    expect(config.verify.allowPrivateMx).toBe(false);
    expect(config.verify.dnsServers).toEqual([]);
    expect(config.rateLimits.anonymous).toEqual({ hour: 60, day: 500 });
    expect(config.rateLimits.authenticated).toEqual({ hour: 300, day: 5000 });
    expect(config.rateLimits.premium).toEqual({ hour: 1000, day: 50000 });
    expect(config.publicUrl).toBe('http://localhost:3000');
    expect(config.queuePrefix).toBe('{agora}');
  });

  it('reads the fixed verification names', () => {
    const config = loadConfig({
      VERIFY_DNS_SERVERS: '127.0.0.53:5353, [::1]:53,dns.example',
      VERIFY_SMTP_PORT: '2525',
      VERIFY_ALLOW_PRIVATE_MX: 'true',
      VERIFY_HELO_NAME: 'probe.example.net',
      VERIFY_SMTP_TIMEOUT_MS: '1500',
    });
    expect(config.verify).toMatchObject({
      dnsServers: ['127.0.0.53:5353', '[::1]:53', 'dns.example'],
      smtpPort: 2525,
      allowPrivateMx: true,
      heloName: 'probe.example.net',
      mailFrom: 'verify@probe.example.net',
      smtpTimeoutMs: 1500,
    });
  });

  it('lists every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        QA_PORT: 'http',
        VERIFY_SMTP_PORT: '70000',
        DATABASE_URL: 'mysql://x',
        VERIFY_ALLOW_PRIVATE_MX: 'maybe',
        LOG_LEVEL: 'loud',
        WORKER_QUEUES: 'ping,nope',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of [
      'QA_PORT',
      'VERIFY_SMTP_PORT',
      'DATABASE_URL',
      'VERIFY_ALLOW_PRIVATE_MX',
      'LOG_LEVEL',
      'WORKER_QUEUES',
    ]) {
      expect(problems).toContain(name);
    }
    expect((error as ConfigError).problems).toHaveLength(6);
  });

  it('understands TRUST_PROXY as a flag, a hop count or addresses', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: 'everyone' })).toThrow(ConfigError);
  });
});

describe('read replica configuration', () => {
  it('reads DATABASE_READ_URLS as a list of PostgreSQL URLs, with the max lag', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://app@primary.internal:5432/agora',
      DATABASE_READ_URLS:
        'postgres://app@replica-1.internal/agora, postgresql://app@replica-2.internal:6432/agora',
      DATABASE_REPLICA_MAX_LAG_MS: '500',
    });
    expect(config.databaseReadUrls).toEqual([
      'postgres://app@replica-1.internal/agora',
      'postgresql://app@replica-2.internal:6432/agora',
    ]);
    expect(config.databaseReplicaMaxLagMs).toBe(500);
    expect(loadConfig({}).databaseReadUrls).toEqual([]);
  });

  it('refuses replicas without DATABASE_URL (the embedded database has none) and URLs that are not PostgreSQL', () => {
    expect(() => loadConfig({ DATABASE_READ_URLS: 'postgres://replica/agora' })).toThrow(
      /DATABASE_READ_URLS needs DATABASE_URL/,
    );
    expect(() =>
      loadConfig({ DATABASE_URL: 'postgres://primary/agora', DATABASE_READ_URLS: 'mysql://replica/agora' }),
    ).toThrow(/DATABASE_READ_URLS: "mysql:\/\/replica\/agora" not a postgres:\/\/ URL/);
  });
});
