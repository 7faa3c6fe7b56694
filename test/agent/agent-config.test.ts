import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAgentOptions } from "../../src/agent/agent-config.js";

describe("agent options from the command line, a config file and the environment", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "fleetq-agent-config-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the file, with paths relative to it", async () => {
    writeFileSync(join(dir, "token"), "s3cret\n");
    const config = join(dir, "agent.yaml");
    writeFileSync(
      config,
      [
        "api: { url: 'http://api:4000/graphql', tokenFile: token }",
        "redis: { url: 'redis://redis:6379' }",
        "concurrency: 8",
        "labels: { region: eu }",
        "kubernetes: { kubeconfig: kube.yaml, context: prod }",
        "simulated: { clusterFile: clusters/a.yaml }",
      ].join("\n"),
    );
    const k8s = await loadAgentOptions({ cluster: "c1", backend: "kubernetes", config }, {});
    expect(k8s).toMatchObject({
      cluster: "c1",
      apiUrl: "http://api:4000/graphql",
      token: "s3cret",
      redis: "redis://redis:6379",
      concurrency: 8,
      labels: { region: "eu" },
      backend: { kind: "kubernetes", kubeconfig: join(dir, "kube.yaml"), context: "prod" },
    });
    const sim = await loadAgentOptions({ cluster: "c1", backend: "simulated", config }, {});
    expect(sim.backend).toEqual({ kind: "simulated", clusterFile: join(dir, "clusters/a.yaml") });
  });

  it("falls back to the environment and defaults", async () => {
    const options = await loadAgentOptions(
      { cluster: "c2", backend: "simulated", clusterFile: "x.yaml" },
      { FLEETQ_AGENT_TOKEN: "t", FLEETQ_API_URL: "http://elsewhere/graphql" },
    );
    expect(options).toMatchObject({
      apiUrl: "http://elsewhere/graphql",
      token: "t",
      redis: "redis://127.0.0.1:6379",
      backend: { kind: "simulated", clusterFile: "x.yaml" },
    });
  });

  it("names the file and the field of what is wrong or missing", async () => {
    const config = join(dir, "bad.yaml");
    writeFileSync(config, "api: { url: 'not a url', token: t }");
    await expect(loadAgentOptions({ cluster: "c", backend: "kubernetes", config }, {})).rejects.toThrow(
      `${config}: field api.url:`,
    );
    writeFileSync(config, "concurrency: 4");
    await expect(loadAgentOptions({ cluster: "c", backend: "kubernetes", config }, {})).rejects.toThrow(
      `${config}: field api.token: no agent token`,
    );
    writeFileSync(config, "api: { token: t }\nsimulated: {}");
    await expect(loadAgentOptions({ cluster: "c", backend: "simulated", config }, {})).rejects.toThrow(
      `${config}: field simulated.clusterFile: the simulated backend needs a cluster file`,
    );
  });
});
