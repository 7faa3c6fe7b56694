// The CLI's own parsing, without a server: job spec files, durations, the API location and token,
// and the aligned tables.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { graphqlEndpoint, resolveConnection } from "../../src/cli/client/config.js";
import { parseDuration } from "../../src/cli/duration.js";
import { CliError } from "../../src/cli/exit-codes.js";
import { parseJobSpec, parseJobSpecs } from "../../src/cli/job-spec.js";
import { renderTable } from "../../src/cli/output/table.js";
import { tempDir } from "../helpers/temp-dir.js";

const refused = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(3);
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("job spec files", () => {
  const base =
    "name: j\nqueue: q\ntasks:\n  - name: w\n    replicas: 1\n    resources: { cpu: CPU, memory: 1Gi }\n";

  it("sends an extended resource's quantity as text, as the API takes it", () => {
    const spec = `${base}    extendedResources: [{ name: amd.com/gpu, quantity: 2 }, { name: hugepages-2Mi, quantity: 1Gi }]\n`;
    const { input } = parseJobSpec(spec.replace("CPU", "2000"), "job.yaml");
    expect((input.tasks as { extendedResources: unknown }[])[0]!.extendedResources).toEqual([
      { name: "amd.com/gpu", quantity: "2" },
      { name: "hugepages-2Mi", quantity: "1Gi" },
    ]);
  });

  it("keeps the fields of SubmitJobInput and applies command-line overrides", () => {
    const { input } = parseJobSpec(base.replace("CPU", "2000"), "job.yaml", {
      queue: "other",
      cluster: "c1",
      idempotencyKey: "run-7",
    });
    expect(input).toEqual({
      name: "j",
      queue: "other",
      cluster: "c1",
      idempotencyKey: "run-7",
      tasks: [{ name: "w", replicas: 1, resources: { cpu: 2000, memory: "1Gi" } }],
    });
  });

  it("reads cpu quantities as Kubernetes writes them, and warns about tiny millicore numbers", () => {
    expect(
      (parseJobSpec(base.replace("CPU", '"4"'), "j.yaml").input.tasks as { resources: { cpu: number } }[])[0]!
        .resources.cpu,
    ).toBe(4000);
    expect(
      (
        parseJobSpec(base.replace("CPU", '"500m"'), "j.yaml").input.tasks as { resources: { cpu: number } }[]
      )[0]!.resources.cpu,
    ).toBe(500);
    const { warnings } = parseJobSpec(base.replace("CPU", "4"), "j.yaml");
    expect(warnings[0]).toContain("cpu 4 means 4 millicores");
    expect(refused(() => parseJobSpec(base.replace("CPU", '"four"'), "j.yaml"))).toContain(
      'j.yaml: field tasks[0].resources.cpu: cpu "four" is not a quantity',
    );
  });

  it("names the file and the field when something is missing or malformed", () => {
    expect(refused(() => parseJobSpec("- a list", "j.yaml"))).toContain(
      "j.yaml: a job spec is a YAML mapping",
    );
    expect(refused(() => parseJobSpec("name: [", "j.yaml"))).toContain("j.yaml: not valid YAML");
    expect(refused(() => parseJobSpec("name: x\ntasks: []\n", "j.yaml"))).toContain(
      "j.yaml: field queue is required (or pass --queue)",
    );
    expect(refused(() => parseJobSpec("name: x\nqueue: q\n", "j.yaml"))).toContain(
      "j.yaml: field tasks is required",
    );
    expect(refused(() => parseJobSpec("name: x\nqueue: q\ntasks: [3]\n", "j.yaml"))).toContain(
      "j.yaml: field tasks[0] must be a mapping",
    );
  });

  it("every example under examples/jobs is a well-formed spec", async () => {
    const { readdirSync, readFileSync } = await import("node:fs");
    const dir = path.resolve(import.meta.dirname, "../../examples/jobs");
    const specs = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
    expect(specs.length).toBeGreaterThanOrEqual(5);
    for (const f of specs) {
      const { inputs, warnings } = parseJobSpecs(readFileSync(path.join(dir, f), "utf8"), f);
      expect(warnings, f).toEqual([]);
      for (const input of inputs) expect(input.name, f).toMatch(/^[a-z0-9-]+$/);
    }
  });

  it("a file of several documents is several specs; --name is refused, --idempotency-key numbered", () => {
    const two =
      "name: a\nqueue: q\ntasks: [{ name: w, replicas: 1 }]\n---\nname: b\nqueue: q\ntasks: [{ name: w, replicas: 1 }]\n---\n";
    const { inputs } = parseJobSpecs(two, "m.yaml", { idempotencyKey: "run-9", queue: "other" });
    expect(inputs.map((i) => [i.name, i.queue, i.idempotencyKey])).toEqual([
      ["a", "other", "run-9-0"],
      ["b", "other", "run-9-1"],
    ]);
    expect(refused(() => parseJobSpecs(two, "m.yaml", { name: "x" }))).toContain(
      "--name names one job; m.yaml has 2",
    );
    expect(refused(() => parseJobSpecs(`${two}name: c\n`, "m.yaml"))).toContain(
      "m.yaml: document 3: field queue is required",
    );
    // --label adds to every document's labels, replacing a label of the same key
    const labelled = parseJobSpecs(
      `labels: [{ key: pipeline, value: "1" }, { key: stage, value: test }]\n${two}`,
      "m.yaml",
      { label: ["pipeline=gh-7", "extra="] },
    ).inputs;
    expect(labelled.map((i) => i.labels)).toEqual([
      [
        { key: "pipeline", value: "gh-7" },
        { key: "stage", value: "test" },
        { key: "extra", value: "" },
      ],
      [
        { key: "pipeline", value: "gh-7" },
        { key: "extra", value: "" },
      ],
    ]);
    expect(refused(() => parseJobSpecs(two, "m.yaml", { label: ["nokey"] }))).toContain(
      '--label: "nokey" is not key=value',
    );
    // one document: as before (the key as given)
    expect(
      parseJobSpecs("name: a\nqueue: q\ntasks: [{ name: w }]\n", "j.yaml", { idempotencyKey: "k" }).inputs,
    ).toEqual([{ name: "a", queue: "q", tasks: [{ name: "w" }], idempotencyKey: "k" }]);
  });
});

describe("durations", () => {
  it("accepts 90s, 30m, 1h30m, 2h, 500ms and plain seconds", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("30m")).toBe(1_800_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("45")).toBe(45_000);
    expect(parseDuration("1d")).toBe(86_400_000);
  });
  it("refuses anything else, naming the flag", () => {
    for (const bad of ["", "soon", "5 minutes", "10x", "0s", "-5m"]) {
      expect(refused(() => parseDuration(bad, "--timeout"))).toContain("--timeout:");
    }
  });
});

describe("where the API is", () => {
  it("normalises URLs to the GraphQL endpoint", () => {
    expect(graphqlEndpoint("localhost:4000")).toBe("http://localhost:4000/graphql");
    expect(graphqlEndpoint("https://fleetq.example.com/")).toBe("https://fleetq.example.com/graphql");
    expect(graphqlEndpoint("http://h:1/graphql")).toBe("http://h:1/graphql");
    expect(refused(() => graphqlEndpoint("ftp://h"))).toContain("must be http:// or https://");
  });

  it("flags win over FLEETQ_URL/FLEETQ_TOKEN, which win over the config file", () => {
    const dir = tempDir("fleetq-config", "test");
    const file = path.join(dir, "config.yaml");
    writeFileSync(file, "url: http://from-file:4000\ntoken: file-token\n");
    const env = { FLEETQ_CONFIG: file };
    expect(resolveConnection({}, env)).toEqual({ url: "http://from-file:4000/graphql", token: "file-token" });
    expect(resolveConnection({}, { ...env, FLEETQ_URL: "http://env:1", FLEETQ_TOKEN: "env-token" })).toEqual({
      url: "http://env:1/graphql",
      token: "env-token",
    });
    expect(
      resolveConnection({ url: "http://flag:2", token: "flag-token" }, { ...env, FLEETQ_TOKEN: "env" }),
    ).toEqual({
      url: "http://flag:2/graphql",
      token: "flag-token",
    });
    // XDG_CONFIG_HOME/fleetq/config.yaml, and nothing at all: the local default, no token
    expect(resolveConnection({}, { XDG_CONFIG_HOME: dir })).toEqual({
      url: "http://localhost:4000/graphql",
      token: null,
    });
  });

  it("a broken config file is named with the field", () => {
    const dir = tempDir("fleetq-config", "test");
    const file = path.join(dir, "config.yaml");
    writeFileSync(file, "url: http://x\ntokn: typo\n");
    expect(refused(() => resolveConnection({}, { FLEETQ_CONFIG: file }))).toContain(`config file ${file}`);
    expect(refused(() => resolveConnection({}, { FLEETQ_CONFIG: file }))).toContain("tokn");
    expect(refused(() => resolveConnection({}, { FLEETQ_CONFIG: path.join(dir, "missing.yaml") }))).toContain(
      "does not exist",
    );
  });
});

it("tables: columns two spaces apart, numbers right-aligned, no trailing spaces", () => {
  const out = renderTable(
    [
      { header: "NAME", value: (r: { n: string; v: number }) => r.n },
      { header: "VALUE", value: (r) => String(r.v), align: "right" },
      { header: "NOTE", value: () => "" },
    ],
    [
      { n: "a", v: 1 },
      { n: "longer-name", v: 12345 },
    ],
  );
  expect(out).toBe(["NAME         VALUE  NOTE", "a                1", "longer-name  12345"].join("\n"));
});
