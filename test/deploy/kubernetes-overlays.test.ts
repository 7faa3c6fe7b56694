// deploy/kubernetes rendered as `kubectl apply -k` would (test/deploy/kustomize.ts): every overlay,
// the agent and the monitoring objects. Each object is valid against the Kubernetes OpenAPI
// schemas (the Prometheus Operator's for ServiceMonitor) and, for built-in kinds, has no field
// the Kubernetes client's models do not know (kubectl apply refuses those); every pod meets the
// Restricted Pod Security Standard by fleetq's own check; and the images, commands, ports,
// environment and probe paths are those the code serves and reads — found in the sources, not
// listed here.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
// The client's generated models alone: the whole client takes seconds more to load.
import * as clientModels from "@kubernetes/client-node/dist/gen/models/all.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { podSecurityViolation } from "../../src/store/index.js";
import { type K8sObject, kustomize, podTemplate, splitImage } from "./kustomize.js";
import { envEntries } from "./pod-spec.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DEPLOY = path.join(ROOT, "deploy/kubernetes");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const matches = (text: string, re: RegExp) => [...text.matchAll(re)].map((m) => m[1]!);

/** The npm package of an API group's schema models (kubernetes-models: the built-in ones). */
const MODEL_PACKAGES: Record<string, string> = {
  "monitoring.coreos.com": "@kubernetes-models/prometheus-operator",
};
type Model = new (o: K8sObject) => { validate(): void };
/** The schema model of an object's kind, loaded alone (a whole group's models take seconds). */
async function schemaModel(o: K8sObject): Promise<Model | undefined> {
  const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
  const module = await import(`${MODEL_PACKAGES[group] ?? "kubernetes-models"}/${o.apiVersion}/${o.kind}`);
  return module[o.kind];
}

const OVERLAYS = readdirSync(path.join(DEPLOY, "overlays"));
const render = (dir: string) => kustomize(path.join(DEPLOY, dir));
const rendered = new Map(
  [...OVERLAYS.map((o) => `overlays/${o}`), "agent", "monitoring"].map((dir) => [dir, render(dir)]),
);
const objects = (dir: string) => rendered.get(dir)!;
const one = (dir: string, kind: string, name: string) => {
  const found = objects(dir).filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${dir}: ${kind} ${name}`).toHaveLength(1);
  return found[0]!;
};

type AttributeMap = { baseName: string; type: string }[];
const attributesOf = (type: string): AttributeMap | undefined =>
  (clientModels as unknown as Record<string, { getAttributeTypeMap?: () => AttributeMap }>)[
    type
  ]?.getAttributeTypeMap?.();
/** The fields `kubectl apply` (strict field validation) would refuse: those no model of the
 * Kubernetes client knows at that place. Models exist for the built-in kinds, not for CRDs. */
function unknownFields(value: unknown, type: string, at: string): string[] {
  const list = /^Array<(.+)>$/.exec(type);
  if (list)
    return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, list[1]!, `${at}[${i}]`)) : [];
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map)
    return Object.entries(value as object).flatMap(([k, v]) => unknownFields(v, map[1]!, `${at}.${k}`));
  const attributes = attributesOf(type);
  if (!attributes || value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const attribute = attributes.find((a) => a.baseName === k);
    return attribute ? unknownFields(v, attribute.type, `${at}.${k}`) : [`${at}.${k}`];
  });
}
const builtInModel = (o: K8sObject) =>
  /^([a-z.]+\/)?v1$/.test(o.apiVersion) && o.apiVersion !== "monitoring.coreos.com/v1" ? `V1${o.kind}` : null;

// --- What the code reads and serves ---

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => read(path.join(dir, f)));
}
/** Every environment variable the servers read: `env.X`, `process.env.X`, `env["X"]`,
 * `numberEnv("X")` and the `*_ENV = "X"` constants. */
const CODE_ENV = new Set(
  [...sources("src"), ...sources("workers")].flatMap((text) => [
    ...matches(text, /\benv\.([A-Z][A-Z0-9_]+)\b/g),
    ...matches(text, /\benv\[\s*"([A-Z][A-Z0-9_]+)"\s*\]/g),
    ...matches(text, /numberEnv\(\s*"([A-Z][A-Z0-9_]+)"/g),
    ...matches(text, /_ENV\s*=\s*"([A-Z][A-Z0-9_]+)"/g),
  ]),
);
const SERVE = read("src/cli/servers/serve.ts");
const WORKER = read("src/cli/servers/worker.ts");
const API_SERVER = read("src/api/server.ts");
/** The server commands of the CLI (`fleetq serve`, `fleetq worker`, …). */
const SERVER_COMMANDS = new Set(matches(read("src/cli/commands/servers.ts"), /\.command\("([a-z-]+)"\)/g));
/** Path of the route served by a handler of src/api/server.ts (`app.get("/readyz", readyz(…))`). */
const apiRoute = (handler: string) => {
  const [found] = matches(API_SERVER, new RegExp(`app\\.get\\("(/[a-z]+)", ${handler}\\b`, "g"));
  expect(found, handler).toBeDefined();
  return found!;
};
const API_METRICS = matches(read("src/metrics/mount-metrics.ts"), /app\.get\("(\/[a-z]+)"/g);
const WORKER_PATHS = matches(WORKER, /req\.url === "(\/[a-z]+)"/g);
const AGENT_PATHS = matches(read("src/cli/servers/agent-health.ts"), /path === "(\/[a-z]+)"/g);
/** The port variable a server reads (`process.env.FLEETQ_…PORT`). */
const portEnv = (text: string) => {
  const found = matches(text, /process\.env\.(FLEETQ_[A-Z_]*PORT)\b/g);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const COMPOSE = parse(read("docker-compose.yml"));
const EXPOSED = matches(read("Dockerfile"), /^EXPOSE (.+)$/gm).flatMap((l) => l.split(/\s+/).map(Number));
const VERSION = JSON.parse(read("package.json")).version as string;

// --- Reading rendered objects ---

const pods = (dir: string) =>
  objects(dir).flatMap((o) => {
    const t = podTemplate(o);
    return t
      ? [{ owner: `${o.kind} ${o.metadata.name}`, template: t, labels: t.metadata?.labels ?? {} }]
      : [];
  });
const containersOf = (template: K8sObject): K8sObject[] => [
  ...(template.spec.initContainers ?? []),
  ...template.spec.containers,
];
const FLEETQ_IMAGE = splitImage(COMPOSE["x-fleetq"].image).name;
const isFleetq = (c: K8sObject) => splitImage(c.image).name.split("/").pop() === FLEETQ_IMAGE;
const fleetqContainers = (dir: string) =>
  pods(dir).flatMap((p) =>
    containersOf(p.template)
      .filter(isFleetq)
      .map((c) => ({ ...p, container: c })),
  );
/** A container's environment as the pod would get it: envFrom ConfigMaps (rendered) and env. */
const environment = (dir: string, c: K8sObject) => envEntries(objects(dir), c);
const serverOf = (dir: string, command: string) => {
  const found = fleetqContainers(dir).filter((p) => p.container.args?.[0] === command);
  expect(found, `${dir}: fleetq ${command}`).toHaveLength(1);
  return found[0]!;
};
function selects(selector: K8sObject | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  const { matchLabels = {}, matchExpressions = [] } = selector;
  return (
    Object.entries(matchLabels).every(([k, v]) => labels[k] === v) &&
    matchExpressions.every((e: K8sObject) => e.operator === "In" && e.values.includes(labels[e.key]))
  );
}
const portNumber = (template: K8sObject, name: string) =>
  containersOf(template)
    .flatMap((c) => c.ports ?? [])
    .find((p: K8sObject) => p.name === name)?.containerPort as number | undefined;

/** Every Secret (name, key) the objects refer to. */
function secretRefs(list: K8sObject[]): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const item of v) walk(item);
      return;
    }
    if (!v || typeof v !== "object") return;
    const o = v as K8sObject;
    if (o.secretKeyRef) out.push(`${o.secretKeyRef.name} ${o.secretKeyRef.key}`);
    if (o.secretRef) out.push(`${o.secretRef.name}`);
    if (typeof o.secretName === "string") out.push(o.secretName);
    if (o.credentials?.name) out.push(`${o.credentials.name} ${o.credentials.key}`);
    for (const value of Object.values(o)) walk(value);
  };
  walk(list);
  return [...new Set(out)];
}

describe("deploy/kubernetes rendered", () => {
  it("finds the dev and production overlays", () => {
    expect(OVERLAYS.sort()).toEqual(["dev", "production"]);
  });

  for (const [dir, list] of rendered) {
    it(`${dir}: every object is valid against its Kubernetes OpenAPI schema, with no field the API does not know, once`, async () => {
      expect(list.length).toBeGreaterThan(0);
      for (const o of list) {
        const Model = await schemaModel(o);
        expect(Model, `${o.apiVersion} ${o.kind}`).toBeDefined();
        expect(() => new Model!(o).validate(), `${o.kind} ${o.metadata.name}`).not.toThrow();
      }
      for (const o of list) {
        const model = builtInModel(o);
        if (!model) continue;
        expect(attributesOf(model), model).toBeDefined();
        expect(unknownFields(o, model, `${o.kind} ${o.metadata.name}`)).toEqual([]);
      }
      const keys = list.map((o) => `${o.kind} ${o.metadata.namespace ?? ""}/${o.metadata.name}`);
      expect(new Set(keys).size).toBe(keys.length);
    });

    it(`${dir}: no secret is embedded: no Secret object, secret-named variables only from Secrets`, () => {
      expect(list.filter((o) => o.kind === "Secret")).toEqual([]);
      const secretName = /PASSWORD|SECRET|TOKEN|^DATABASE_URL$|REDIS_URL$/;
      for (const p of pods(dir))
        for (const c of containersOf(p.template))
          for (const e of c.env ?? [])
            if (secretName.test(e.name))
              expect(e.valueFrom?.secretKeyRef, `${c.name} ${e.name}`).toBeDefined();
      for (const cm of list.filter((o) => o.kind === "ConfigMap"))
        expect(Object.keys(cm.data).filter((k) => secretName.test(k))).toEqual([]);
    });
  }

  it("the field check finds a misspelt field, as kubectl apply's strict validation would", () => {
    const api = structuredClone(one("overlays/dev", "Deployment", "fleetq-api"));
    api.spec.template.spec.containers[0].readinesProbe = api.spec.template.spec.containers[0].readinessProbe;
    expect(unknownFields(api, builtInModel(api)!, "api")).toEqual([
      "api.spec.template.spec.containers[0].readinesProbe",
    ]);
  });

  it("every Secret referred to, with its key, is described in docs/deploy-kubernetes.md", () => {
    const doc = read("docs/deploy-kubernetes.md");
    const refs = secretRefs([...rendered.values()].flat());
    expect(refs.length).toBeGreaterThan(5);
    for (const ref of refs) for (const part of ref.split(" ")) expect(doc, ref).toContain(`\`${part}\``);
  });

  it("every pod meets the Restricted Pod Security Standard (fleetq's own check), which the check does enforce", () => {
    const all = [...rendered.keys()].flatMap(pods);
    expect(all.length).toBeGreaterThanOrEqual(5);
    for (const p of all) expect(podSecurityViolation(p.template, "RESTRICTED"), p.owner).toBeNull();
    const loose = structuredClone(all[0]!.template);
    delete loose.spec.securityContext;
    expect(podSecurityViolation(loose, "RESTRICTED")).not.toBeNull();
  });

  it("every container has CPU and memory requests and limits", () => {
    for (const p of [...rendered.keys()].flatMap(pods))
      for (const c of containersOf(p.template))
        for (const kind of ["requests", "limits"])
          expect(c.resources?.[kind], `${p.owner} ${c.name} ${kind}`).toMatchObject({
            cpu: expect.any(String),
            memory: expect.any(String),
          });
  });

  it("fleetq's containers run its image with a server command and only variables the code reads", () => {
    for (const dir of rendered.keys())
      for (const { owner, container } of fleetqContainers(dir)) {
        expect(SERVER_COMMANDS, `${owner}: ${container.args?.[0]}`).toContain(container.args?.[0]);
        // A variable is read by the code, or substituted into the container's arguments ($(NAME)).
        const substituted = new Set(matches((container.args ?? []).join(" "), /\$\(([A-Z0-9_]+)\)/g));
        for (const name of environment(dir, container).keys())
          if (!substituted.has(name)) expect(CODE_ENV, `${owner}: ${name}`).toContain(name);
      }
    const tag = (dir: string) => new Set(fleetqContainers(dir).map((p) => splitImage(p.container.image).tag));
    expect(tag("overlays/production")).toEqual(new Set([VERSION]));
    expect(tag("agent")).toEqual(new Set([VERSION]));
    expect(tag("overlays/dev")).toEqual(new Set([splitImage(COMPOSE["x-fleetq"].image).tag]));
    // The dev overlay's PostgreSQL and Redis are those docker compose runs.
    const images = new Set(pods("overlays/dev").flatMap((p) => containersOf(p.template).map((c) => c.image)));
    expect(images).toContain(COMPOSE.services.postgres.image);
    expect(images).toContain(COMPOSE.services.redis.image);
  });

  for (const dir of OVERLAYS.map((o) => `overlays/${o}`)) {
    it(`${dir}: the API serves on the port it is told, probed on its health routes, its Service and ServiceMonitor on that port`, () => {
      const api = serverOf(dir, "serve");
      const port = Number(environment(dir, api.container).get(portEnv(SERVE))?.value);
      expect(portNumber(api.template, "http")).toBe(port);
      expect(EXPOSED).toContain(port);
      const c = api.container;
      expect(c.readinessProbe.httpGet).toEqual({ path: apiRoute("readyz"), port: "http" });
      expect(c.livenessProbe.httpGet).toEqual({ path: apiRoute("healthz"), port: "http" });
      expect(c.startupProbe.httpGet).toEqual({ path: apiRoute("healthz"), port: "http" });
      const service = one(dir, "Service", "fleetq-api");
      expect(selects({ matchLabels: service.spec.selector }, api.labels)).toBe(true);
      expect(service.spec.ports).toEqual([{ name: "http", port, targetPort: "http" }]);
      const pdb = one(dir, "PodDisruptionBudget", "fleetq-api");
      expect(selects(pdb.spec.selector, api.labels)).toBe(true);
    });

    it(`${dir}: the workers serve metrics and health on the port they are told, with time to hand their clusters over`, () => {
      const worker = serverOf(dir, "worker");
      const port = Number(environment(dir, worker.container).get(portEnv(WORKER))?.value);
      expect(portNumber(worker.template, "metrics")).toBe(port);
      expect(EXPOSED).toContain(port);
      for (const probe of ["readinessProbe", "livenessProbe", "startupProbe"])
        expect(WORKER_PATHS).toContain(worker.container[probe].httpGet.path);
      expect(worker.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(30);
      const service = one(dir, "Service", "fleetq-worker");
      expect(selects({ matchLabels: service.spec.selector }, worker.labels)).toBe(true);
      expect(service.spec.ports).toEqual([{ name: "metrics", port, targetPort: "metrics" }]);
    });

    it(`${dir}: the migrations run in an init container before the API and each worker start`, () => {
      for (const command of ["serve", "worker"]) {
        const { template, container } = serverOf(dir, command);
        const [init] = template.spec.initContainers;
        expect(init.args).toEqual(["migrate"]);
        expect(SERVER_COMMANDS).toContain("migrate");
        expect(init.image).toBe(container.image);
        const url = (c: K8sObject) => c.env.find((e: K8sObject) => e.name === "DATABASE_URL").valueFrom;
        expect(url(init)).toEqual(url(container));
      }
    });
  }

  it("dev: one API and one worker, with PostgreSQL and Redis beside them reached only by fleetq", () => {
    const dev = "overlays/dev";
    expect(one(dev, "Deployment", "fleetq-api").spec.replicas).toBe(1);
    expect(one(dev, "Deployment", "fleetq-worker").spec.replicas).toBe(1);
    const fleetq = [serverOf(dev, "serve").labels, serverOf(dev, "worker").labels];
    const agent = pods("agent")[0]!.labels;
    for (const [store, agentsToo] of [
      ["fleetq-postgres", false],
      ["fleetq-redis", true],
    ] as const) {
      expect(one(dev, "StatefulSet", store).spec.replicas).toBe(1);
      const policy = one(dev, "NetworkPolicy", store);
      const from = policy.spec.ingress.flatMap((r: K8sObject) => r.from);
      const admits = (labels: Record<string, string>, otherNamespace: boolean) =>
        from.some(
          (peer: K8sObject) =>
            (otherNamespace ? peer.namespaceSelector : true) && selects(peer.podSelector, labels),
        );
      for (const labels of fleetq) expect(admits(labels, false), store).toBe(true);
      expect(admits(agent, true), store).toBe(agentsToo);
    }
  });

  it("production: HA replicas, external PostgreSQL and Redis, an Ingress to the API, ServiceMonitors for the API and the workers", () => {
    const prod = "overlays/production";
    expect(one(prod, "Deployment", "fleetq-api").spec.replicas).toBeGreaterThanOrEqual(2);
    expect(one(prod, "Deployment", "fleetq-worker").spec.replicas).toBeGreaterThanOrEqual(3);
    expect(objects(prod).filter((o) => o.kind === "StatefulSet")).toEqual([]);
    const ingress = one(prod, "Ingress", "fleetq-api");
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({
      name: "fleetq-api",
      port: { name: "http" },
    });
    // Every ServiceMonitor of the monitoring directory is in production, on a real Service port and metrics route.
    const monitors = objects("monitoring").filter((o) => o.kind === "ServiceMonitor");
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual(["fleetq-api", "fleetq-worker"]);
    const routes: Record<string, string[]> = { "fleetq-api": API_METRICS, "fleetq-worker": WORKER_PATHS };
    for (const m of monitors) {
      expect(one(prod, "ServiceMonitor", m.metadata.name)).toEqual(m);
      const service = one(prod, "Service", m.metadata.name);
      expect(selects(m.spec.selector, service.metadata.labels)).toBe(true);
      for (const e of m.spec.endpoints) {
        expect(service.spec.ports.map((p: K8sObject) => p.name)).toContain(e.port);
        expect(routes[m.metadata.name]).toContain(e.path);
      }
    }
  });

  it("agent: probed on its health routes; its egress reaches only the API, Redis, DNS and the Kubernetes API", () => {
    const agent = serverOf("agent", "agent");
    const port = Number(environment("agent", agent.container).get("FLEETQ_AGENT_HEALTH_PORT")?.value);
    expect(read("src/cli/servers/agent.ts")).toContain("process.env.FLEETQ_AGENT_HEALTH_PORT");
    expect(portNumber(agent.template, "probes")).toBe(port);
    for (const probe of ["readinessProbe", "livenessProbe"])
      expect(AGENT_PATHS).toContain(agent.container[probe].httpGet.path);
    const policy = one("agent", "NetworkPolicy", "fleetq-agent");
    expect(selects(policy.spec.podSelector, agent.labels)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(["Egress"]);
    // The peers it names are the dev overlay's API and Redis pods, in their namespace, on their ports.
    const dev = "overlays/dev";
    const targets = [
      { labels: serverOf(dev, "serve").labels, port: portNumber(serverOf(dev, "serve").template, "http") },
      {
        labels: pods(dev).find((p) => p.owner === "StatefulSet fleetq-redis")!.labels,
        port: portNumber(pods(dev).find((p) => p.owner === "StatefulSet fleetq-redis")!.template, "redis"),
      },
    ];
    const namespace = one(dev, "Deployment", "fleetq-api").metadata.namespace;
    const peered = policy.spec.egress.filter((r: K8sObject) => r.to);
    expect(peered).toHaveLength(targets.length);
    for (const [i, rule] of peered.entries()) {
      const [peer] = rule.to;
      expect(selects(peer.namespaceSelector, { "kubernetes.io/metadata.name": namespace })).toBe(true);
      expect(selects(peer.podSelector, targets[i]!.labels)).toBe(true);
      expect(rule.ports).toEqual([{ protocol: "TCP", port: targets[i]!.port }]);
    }
    const open = policy.spec.egress.filter((r: K8sObject) => !r.to).flatMap((r: K8sObject) => r.ports);
    expect(new Set(open.map((p: K8sObject) => p.port))).toEqual(new Set([53, 443, 6443]));
    // Its API URL, as shipped, is the dev overlay's API Service and the server's GraphQL path.
    const apiUrl = new URL(environment("agent", agent.container).get("FLEETQ_API_URL")!.value);
    expect(apiUrl.hostname).toBe(`fleetq-api.${namespace}.svc`);
    expect(Number(apiUrl.port)).toBe(one(dev, "Service", "fleetq-api").spec.ports[0].port);
    expect(matches(API_SERVER, /app\.use\(\s*"(\/[a-z]+)"/g)).toContain(apiUrl.pathname);
  });
});
