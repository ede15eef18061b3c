import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config.js';
import { ROOT } from '../support/processes.js';

/**
 * No Docker engine or cluster runs here, so the deployment files are checked for what can go wrong without
 * one: they parse, every environment they set is accepted by the config schema, the commands name real entry
 * points and roles, probes hit the real paths and ports, and grace periods outlast the slowest job.
 */

const read = (file: string) => readFileSync(path.join(ROOT, 'infra', file), 'utf8');
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const k8s: Doc[] = readdirSync(path.join(ROOT, 'infra/k8s'))
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) =>
    parseAllDocuments(read(`k8s/${f}`)).map((d) => {
      expect(d.errors, f).toEqual([]);
      return d.toJS() as Doc;
    }),
  );
const byKind = (kind: string, name: string) => k8s.find((d) => d.kind === kind && d.metadata?.name === name);
const configMap = byKind('ConfigMap', 'agora-config')!.data as Record<string, string>;
// What the Secret would add: values of the right shape, so the schema sees a complete environment.
const secrets = {
  DATABASE_URL: 'postgres://u:p@db:5432/agora',
  REDIS_URL: 'redis://redis:6379',
  // Production refuses credentials under 32 characters (shared/production-guards.ts).
  ADMIN_TOKEN: 'x'.repeat(40),
  APP_SECRET: 'y'.repeat(48),
};

/** The slowest a job may legitimately run, from the configuration the workers would load. */
const slowestJobMs = (env: Record<string, string>) => {
  const config = loadConfig(env);
  return Math.max(config.verify.probeTimeoutMs, config.verify.bulkDeadlineMs, config.ai.deadlineMs);
};
/** A command of the image runs compiled code (dist/x.js, from x.ts by `npm run build`) of a real entry point in bin/. */
const entryPoint = (args: string[]) => {
  expect(args[0]).toMatch(/^dist\/bin\/[a-z-]+\.js$/);
  const source = args[0]!.replace(/^dist\//, '').replace(/\.js$/, '.ts');
  expect(existsSync(path.join(ROOT, source)), source).toBe(true);
  const role = args.indexOf('--role');
  if (role >= 0) expect(['all', 'qa', 'verify', 'workers']).toContain(args[role + 1]);
};

describe('Kubernetes manifests', () => {
  it('parse, and their environment passes the configuration schema', () => {
    expect(k8s.length).toBeGreaterThanOrEqual(8);
    for (const d of k8s)
      expect(d.apiVersion && d.kind && d.metadata?.name, JSON.stringify(d).slice(0, 80)).toBeTruthy();
    expect(() => loadConfig({ ...configMap, ...secrets })).not.toThrow();
    expect(configMap.QUEUE_PREFIX).toMatch(/^\{.+\}$/);
  });

  const container = (name: string) => byKind('Deployment', name)!.spec.template.spec.containers[0] as Doc;
  const envOf = (c: Doc): Record<string, string> => ({
    ...configMap,
    ...secrets,
    ...Object.fromEntries((c.env ?? []).map((e: Doc) => [e.name, e.value])),
  });
  const graceMs = (name: string) =>
    byKind('Deployment', name)!.spec.template.spec.terminationGracePeriodSeconds * 1000;
  const preStopMs = (c: Doc) =>
    c.lifecycle?.preStop ? Number(c.lifecycle.preStop.exec.command.at(-1)) * 1000 : 0;

  it.each([
    ['agora-qa', 'qa', 'QA_PORT'],
    ['agora-verify', 'verify', 'VERIFY_PORT'],
  ])(
    '%s: role %s, readiness on /ready and liveness on /health at the configured port',
    (name, role, portVar) => {
      const c = container(name);
      expect(c.args).toEqual(['dist/bin/start.js', '--role', role]);
      entryPoint(c.args);
      const port = c.ports.find((p: Doc) => p.name === 'http').containerPort;
      expect(String(port)).toBe(envOf(c)[portVar]);
      expect(c.readinessProbe.httpGet).toEqual({ path: '/ready', port: 'http' });
      expect(c.livenessProbe.httpGet).toEqual({ path: '/health', port: 'http' });
      // Requests in flight finish: grace > preStop + SHUTDOWN_TIMEOUT_MS + the process's 2 s margin.
      const shutdownMs = loadConfig(envOf(c)).shutdownTimeoutMs;
      expect(graceMs(name)).toBeGreaterThan(preStopMs(c) + shutdownMs + 2000);
      const service = byKind('Service', name)!;
      expect(service.spec.selector).toEqual(byKind('Deployment', name)!.spec.selector.matchLabels);
    },
  );

  it('workers: a grace period longer than the longest job, liveness on the metrics listener, an HPA', () => {
    const c = container('agora-workers');
    expect(c.args[0]).toBe('dist/bin/workers.js');
    entryPoint(c.args);
    const env = envOf(c);
    const config = loadConfig(env);
    expect(config.shutdownTimeoutMs).toBeGreaterThanOrEqual(slowestJobMs(env));
    expect(graceMs('agora-workers')).toBeGreaterThan(config.shutdownTimeoutMs + 2000);
    expect(c.livenessProbe.httpGet.path).toBe('/health');
    expect(c.ports.find((p: Doc) => p.name === c.livenessProbe.httpGet.port).containerPort).toBe(
      config.workerMetricsPort,
    );

    const hpa = byKind('HorizontalPodAutoscaler', 'agora-workers')!;
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'agora-workers',
    });
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });

  it('every pod runs as non-root from one image, and a Job applies the migrations', () => {
    const pods = [
      ...['agora-qa', 'agora-verify', 'agora-workers'].map(
        (n) => byKind('Deployment', n)!.spec.template.spec,
      ),
      byKind('Job', 'agora-migrate')!.spec.template.spec,
    ];
    expect(new Set(pods.map((p) => p.containers[0].image)).size).toBe(1);
    for (const pod of pods) {
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.containers[0].securityContext.allowPrivilegeEscalation).toBe(false);
    }
    const job = byKind('Job', 'agora-migrate')!.spec.template.spec.containers[0];
    expect(job.args).toEqual(['dist/bin/migrate.js']);
    entryPoint(job.args);
  });
});

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as Doc;
  const services = compose.services as Record<string, Doc>;

  it('has PostgreSQL, Redis (noeviction, AOF), a migration step, both services and scalable workers', () => {
    expect(Object.keys(services).sort()).toEqual(['migrate', 'postgres', 'qa', 'redis', 'verify', 'workers']);
    const redis = services.redis!.command.join(' ');
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(redis).toContain('--appendonly yes');
    expect(services.qa!.command).toEqual(['dist/bin/start.js', '--role', 'qa']);
    expect(services.verify!.command).toEqual(['dist/bin/start.js', '--role', 'verify']);
    expect(services.workers!.command).toEqual(['dist/bin/workers.js']);
    expect(services.migrate!.command).toEqual(['dist/bin/migrate.js']);
    for (const s of ['qa', 'verify', 'workers', 'migrate']) entryPoint(services[s]!.command);
    // `--scale workers=4` needs no fixed name and no published host port.
    expect(services.workers!.container_name).toBeUndefined();
    expect(services.workers!.ports).toBeUndefined();
    expect(services.qa!.depends_on.migrate.condition).toBe('service_completed_successfully');
  });

  it('sets environments the configuration accepts, and lets workers drain before Docker kills them', () => {
    const resolve = (env: Record<string, string>) =>
      Object.fromEntries(
        Object.entries(env).map(([k, v]) => [
          k,
          // ${X:-default} takes its default; ${X:?message} is required: an operator's value of the right length.
          String(v)
            .replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')
            .replace(/\$\{[A-Z_]+:\?[^}]*\}/g, 's'.repeat(48)),
        ]),
      );
    for (const s of ['qa', 'verify', 'workers', 'migrate']) {
      expect(() => loadConfig(resolve(services[s]!.environment)), s).not.toThrow();
    }
    const env = resolve(services.workers!.environment);
    const shutdownMs = loadConfig(env).shutdownTimeoutMs;
    expect(shutdownMs).toBeGreaterThanOrEqual(slowestJobMs(env));
    expect(Number(/^(\d+)s$/.exec(services.workers!.stop_grace_period)![1]) * 1000).toBeGreaterThan(
      shutdownMs + 2000,
    );
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);

  it('is multi-stage, builds with infra/build-image-steps.sh and runs as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const step of ['install', 'check', 'build', 'prune'])
      expect(dockerfile).toContain(`infra/build-image-steps.sh ${step}`);
    const runtime = stages.at(-1)!;
    expect(runtime).toMatch(/^USER node$/m);
    // Compiled code, plain node: no TypeScript loader at run time.
    expect(runtime).toContain('ENTRYPOINT ["node"]');
    expect(runtime).toContain('CMD ["dist/bin/start.js", "--role", "all"]');
    expect(runtime).not.toContain('tsx');
    // Everything the runtime stage copies exists, and nothing of test/ or bench/ goes in.
    for (const [, dir] of runtime.matchAll(/^COPY --from=build \S+ \/app\/(\S+) /gm)) {
      expect(existsSync(path.join(ROOT, dir!)) || ['node_modules', 'dist'].includes(dir!), dir).toBe(true);
    }
    expect(runtime).not.toMatch(/\/app\/(test|bench)\b/);
    const ignored = read('Dockerfile.dockerignore').split('\n');
    for (const entry of ['node_modules', '.git', '.data']) expect(ignored).toContain(entry);
  });
});
