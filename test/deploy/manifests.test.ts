/**
 * The deployment files parse and hold together: every Kubernetes manifest in deploy/kubernetes, compose.yaml,
 * the nginx configuration, the Dockerfile and the entry point. Static checks only (no cluster, no engine);
 * test/deploy/container.test.ts runs the image where one was built.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { loadConfig } from '../../src/modules/config.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const K8S = path.join(ROOT, 'deploy/kubernetes');

type Doc = Record<string, any>;

function loadManifests(): Array<{ file: string; doc: Doc }> {
  const out: Array<{ file: string; doc: Doc }> = [];
  for (const file of fs.readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f))) {
    const docs = parseAllDocuments(fs.readFileSync(path.join(K8S, file), 'utf8'));
    for (const d of docs) {
      expect(d.errors, `${file}: ${d.errors.map((e) => e.message).join('; ')}`).toEqual([]);
      const doc = d.toJS({ maxAliasCount: 100 }) as Doc | null;
      if (doc) out.push({ file, doc });
    }
  }
  return out;
}

const manifests = loadManifests();
const byKind = (kind: string) => manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc);
const named = (kind: string, name: string): Doc => {
  const d = byKind(kind).find((x) => x.metadata?.name === name);
  expect(d, `${kind}/${name}`).toBeDefined();
  return d!;
};
const configMap = named('ConfigMap', 'folio-config');
const officeTimeoutMs = Number(configMap.data.OFFICE_TIMEOUT_MS);

/** Kubernetes CPU quantity ("2", "500m") in CPUs. */
const cpu = (q: string | number) => (String(q).endsWith('m') ? Number(String(q).slice(0, -1)) / 1000 : Number(q));
/** Kubernetes memory quantity (Mi, Gi) in MiB. */
function mib(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Mi|Gi)$/.exec(q);
  expect(m, `memory quantity ${q}`).not.toBeNull();
  return Number(m![1]) * (m![2] === 'Gi' ? 1024 : 1);
}
const seconds = (probe: Doc) => (probe.periodSeconds ?? 10) * (probe.failureThreshold ?? 3);

describe('Kubernetes manifests', () => {
  it('every document has apiVersion, kind and a name; the expected kinds are there', () => {
    for (const { file, doc } of manifests) {
      expect(typeof doc.apiVersion, file).toBe('string');
      expect(typeof doc.kind, file).toBe('string');
      if (doc.kind !== 'Kustomization') expect(typeof doc.metadata?.name, file).toBe('string');
    }
    const kinds = manifests.map((m): string => m.doc.kind).sort();
    for (const k of ['Deployment', 'Service', 'PodDisruptionBudget', 'HorizontalPodAutoscaler', 'ConfigMap', 'Secret', 'Namespace']) {
      expect(kinds).toContain(k);
    }
    expect(
      byKind('Deployment')
        .map((d): string => d.metadata.name)
        .sort(),
    ).toEqual(['folio-api', 'folio-ingest']);
  });

  it('the kustomization lists every manifest except the example Secret, which it must never apply', () => {
    const k = manifests.find((m) => m.doc.kind === 'Kustomization')!.doc;
    const files = fs.readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...(k.resources as string[])].sort()).toEqual(files.filter((f) => f !== 'secret.example.yaml').sort());
  });

  it('the ConfigMap is a valid Folio configuration', () => {
    // Everything but the secrets; loadConfig throws a ConfigError naming a bad variable.
    const config = loadConfig({ ...configMap.data, SIGNING_P12_PASSWORD: 'x' });
    expect(config.officeTimeoutMs).toBe(officeTimeoutMs);
    expect(config.host).toBe('0.0.0.0');
  });

  const api = named('Deployment', 'folio-api');
  const pod = api.spec.template.spec;
  const container = pod.containers[0];

  it('API readiness, liveness and startup probes on /v1/health; liveness far more patient than readiness', () => {
    for (const p of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
      expect(container[p]?.httpGet?.path, p).toBe('/v1/health');
      expect(container[p].httpGet.port).toBe('http');
    }
    const readiness = container.readinessProbe;
    const liveness = container.livenessProbe;
    expect(seconds(liveness)).toBeGreaterThanOrEqual(4 * seconds(readiness));
    // A busy pod answers health late (event-loop stalls up to ~2 s measured): liveness waits much longer.
    expect(liveness.timeoutSeconds).toBeGreaterThanOrEqual(5);
    expect(seconds(liveness)).toBeGreaterThanOrEqual(60);
    // LibreOffice's warm start gets minutes before liveness counts.
    expect(seconds(container.startupProbe)).toBeGreaterThanOrEqual(120);
  });

  it('graceful termination: grace period > preStop sleep + OFFICE_TIMEOUT_MS; preStop sleeps', () => {
    const preStop = container.lifecycle.preStop.exec.command as string[];
    expect(preStop[0]).toBe('sleep');
    const sleepS = Number(preStop[1]);
    expect(sleepS).toBeGreaterThanOrEqual(5);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(sleepS + officeTimeoutMs / 1000);
    expect(api.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it('resources: CPU limit sets the pools (no OFFICE_WORKERS override); memory covers every ceiling', () => {
    const { requests, limits } = container.resources;
    expect(cpu(limits.cpu)).toBeGreaterThanOrEqual(1);
    expect(Number.isInteger(cpu(limits.cpu))).toBe(true); // floor(quota) would waste a fraction
    expect(cpu(requests.cpu)).toBe(cpu(limits.cpu));
    expect(configMap.data.OFFICE_WORKERS).toBeUndefined();
    expect(configMap.data.ENGINE_WORKERS).toBeUndefined();
    expect(container.env?.find((e: Doc) => e.name === 'OFFICE_WORKERS')).toBeUndefined();
    const workers = cpu(limits.cpu);
    const ceilings = workers * Number(configMap.data.OFFICE_MEMORY_MB) + workers * Number(configMap.data.ENGINE_MEMORY_MB);
    expect(mib(limits.memory)).toBeGreaterThanOrEqual(ceilings + 256);
    expect(mib(requests.memory)).toBeLessThanOrEqual(mib(limits.memory));
  });

  it('the signing key comes from a Secret mounted as files, config from the ConfigMap, URLs from a Secret', () => {
    const signingVolume = pod.volumes.find((v: Doc) => v.secret?.secretName === 'folio-signing');
    expect(signingVolume).toBeDefined();
    const mount = container.volumeMounts.find((m: Doc) => m.name === signingVolume.name);
    expect(mount.readOnly).toBe(true);
    expect(configMap.data.SIGNING_P12.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(configMap.data.SIGNING_P12_PASSWORD_FILE.startsWith(`${mount.mountPath}/`)).toBe(true);
    expect(container.envFrom).toEqual(expect.arrayContaining([{ configMapRef: { name: 'folio-config' } }, { secretRef: { name: 'folio-env' } }]));
    const envSecret = named('Secret', 'folio-env');
    expect(Object.keys(envSecret.stringData)).toEqual(expect.arrayContaining(['DATABASE_URL', 'REDIS_URL', 'TELEMETRY_DATABASE_URL']));
    expect(Object.keys(named('Secret', 'folio-signing').data).sort()).toEqual(['signing.p12', 'signing.p12.password']);
    // The password file is readable by the non-root user through fsGroup, by nobody else.
    expect(pod.securityContext.fsGroup).toBe(10001);
    expect(signingVolume.secret.defaultMode).toBe(0o440);
  });

  it('non-root, read-only root filesystem, /dev/shm and /tmp writable', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    const mounts = container.volumeMounts.map((m: Doc) => m.mountPath);
    expect(mounts).toEqual(expect.arrayContaining(['/dev/shm', '/tmp', '/var/lib/folio']));
    const shm = pod.volumes.find((v: Doc) => v.name === container.volumeMounts.find((m: Doc) => m.mountPath === '/dev/shm').name);
    expect(shm.emptyDir.medium).toBe('Memory');
  });

  it('Service, PodDisruptionBudget and HorizontalPodAutoscaler point at the pods of their Deployment', () => {
    for (const name of ['folio-api', 'folio-ingest']) {
      const labels = named('Deployment', name).spec.template.metadata.labels;
      const service = named('Service', name);
      expect(labels).toMatchObject(service.spec.selector);
      expect(labels).toMatchObject(named('Deployment', name).spec.selector.matchLabels);
      const pdb = named('PodDisruptionBudget', name);
      expect(labels).toMatchObject(pdb.spec.selector.matchLabels);
      expect(pdb.spec.maxUnavailable ?? 0).toBeLessThan(named('Deployment', name).spec.replicas);
    }
    const hpa = named('HorizontalPodAutoscaler', 'folio-api');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'folio-api' });
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
  });

  it('the ingest runs the ingest mode with probes on its /v1/health; liveness ignores an unreachable database', () => {
    const ingest = named('Deployment', 'folio-ingest').spec.template.spec.containers[0];
    expect(ingest.args).toEqual(['ingest']);
    for (const p of ['readinessProbe', 'startupProbe']) expect(ingest[p].httpGet, p).toEqual({ path: '/v1/health', port: 'http' });
    expect(ingest.livenessProbe.exec.command).toEqual(['node', '/app/deploy/healthcheck.mjs', 'ingest-live']);
    expect(seconds(ingest.livenessProbe)).toBeGreaterThan(seconds(ingest.readinessProbe));
    expect(ingest.ports[0].containerPort).toBe(Number(configMap.data.INGEST_PORT));
  });
});

describe('compose.yaml', () => {
  const compose = parse(fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8'), { maxAliasCount: 100, merge: true }) as Doc;
  const services = compose.services as Record<string, Doc>;

  it('two API replicas, the ingest, PostgreSQL, Redis and a proxy, each with a health check', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'ingest', 'postgres', 'proxy', 'redis']);
    for (const name of ['ingest', 'postgres', 'redis', 'proxy']) expect(services[name]!.healthcheck?.test, name).toBeDefined();
    // The API replicas use the image's HEALTHCHECK (GET /v1/health through deploy/healthcheck.mjs).
    expect(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^HEALTHCHECK .*\n.*deploy\/healthcheck\.mjs/m);
  });

  it('start order through service_healthy; the signing key as a secret file; PostgreSQL on a volume', () => {
    for (const api of ['api-1', 'api-2']) {
      const s = services[api]!;
      expect(s.command).toEqual(['api']);
      expect(s.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
      expect(s.environment.SIGNING_P12).toBe('/run/secrets/signing_p12');
      expect(s.environment.SIGNING_P12_PASSWORD_FILE).toBe('/run/secrets/signing_p12_password');
      expect(s.environment.REDIS_URL).toMatch(/^redis:\/\/redis:/);
      expect(s.secrets).toEqual(expect.arrayContaining(['signing_p12', 'signing_p12_password', 'database_url']));
      const grace = /^(\d+)s$/.exec(s.stop_grace_period)!;
      expect(Number(grace[1])).toBeGreaterThan(officeTimeoutMs / 1000);
      expect(Number(s.environment.OFFICE_TIMEOUT_MS)).toBe(officeTimeoutMs);
      // The pools follow `cpus`; the memory limit covers every worker at its ceiling, as in Kubernetes.
      const workers = Math.floor(Number(s.cpus));
      const limitMb = Number(/^(\d+)m$/.exec(s.mem_limit)![1]);
      expect(limitMb).toBeGreaterThanOrEqual(400 + workers * (Number(s.environment.OFFICE_MEMORY_MB) + Number(s.environment.ENGINE_MEMORY_MB)));
    }
    expect(services.proxy!.depends_on['api-1'].condition).toBe('service_healthy');
    expect(services.ingest!.command).toEqual(['ingest']);
    expect(compose.secrets.signing_p12.file).toBe('./deploy/secrets/signing.p12');
    expect(services.postgres!.volumes[0]).toMatch(/^postgres-data:\/var\/lib\/postgresql\/data$/);
    expect(compose.volumes).toHaveProperty('postgres-data');
  });

  it('nginx: round-robin over both replicas, bodies ≥ 26 MB, timeouts above the office budget', () => {
    const conf = fs.readFileSync(path.join(ROOT, 'deploy/nginx/nginx.conf'), 'utf8');
    const upstream = /upstream folio_api \{([^}]*)\}/.exec(conf)![1]!;
    expect(upstream).toMatch(/server api-1:8080/);
    expect(upstream).toMatch(/server api-2:8080/);
    expect(upstream).not.toMatch(/\b(ip_hash|hash|least_conn)\b/);
    const body = /\n\s*client_max_body_size (\d+)m;/.exec(conf)!;
    expect(Number(body[1])).toBeGreaterThanOrEqual(26);
    for (const t of ['proxy_read_timeout', 'proxy_send_timeout']) {
      const m = new RegExp(`${t} (\\d+)s;`).exec(conf)!;
      expect(Number(m[1]) * 1000, t).toBeGreaterThan(officeTimeoutMs);
    }
    expect(services.proxy!.volumes[0]).toBe('./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro');
  });
});

describe('Dockerfile and entry point', () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');

  it('multi-stage, non-root, health check, SIGTERM, entry point, the runtime packages', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(4);
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=debian:bookworm-slim$/m);
    expect(dockerfile).toMatch(/^ARG NODE_DIST=official$/m);
    expect(dockerfile).toMatch(/^USER folio:folio$/m);
    expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
    expect(dockerfile).toMatch(/^EXPOSE 8080 8081$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "\/app\/deploy\/entrypoint\.sh"\]$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const setup = fs.readFileSync(path.join(ROOT, 'scripts/setup.sh'), 'utf8');
    const runtimePackages = /apt_packages=\(([^)]*)\)/.exec(setup)![1]!.split(/\s+/).filter(Boolean);
    for (const p of runtimePackages) expect(dockerfile, p).toContain(p);
  });

  it('.dockerignore keeps node_modules, dist and .git out of the context', () => {
    const ignore = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['**/node_modules', '**/dist', '.git']) expect(ignore).toContain(p);
    expect(ignore).not.toContain('deploy');
  });

  it('entrypoint.sh is valid sh and executable', () => {
    const file = path.join(ROOT, 'deploy/entrypoint.sh');
    execFileSync('sh', ['-n', file]);
    expect(fs.statSync(file).mode & 0o111).not.toBe(0);
  });
});
