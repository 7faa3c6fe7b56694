// `fleetq webhook create|list|deliveries|enable|delete` against the real API: the id and the
// secret shown once, the tables, a delivery log, and refusals (exit code 3) naming what is wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fanOutWebhookEvents, recordEvents } from "../../src/store/index.js";
import { gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { runCli } from "./run-cli.js";

let t: TestApi;
let member: string;
const as = (token: string) => (args: string[]) =>
  runCli(args, { url: t.url.replace(/\/graphql$/, ""), token });
const admin = (args: string[]) => as(t.adminToken)(args);

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "vision" }) { name } }`);
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "speech" }) { name } }`);
  member = (
    await gqlOk<{ createToken: { secret: string } }>(
      t.url,
      t.adminToken,
      `mutation { createToken(input: { name: "vision-ci", role: MEMBER, queues: ["vision"] }) { secret } }`,
    )
  ).createToken.secret;
}, 60_000);
afterAll(() => t?.close());

describe("fleetq webhook", () => {
  it("create prints the id and the secret once; list, deliveries, enable and delete follow", async () => {
    const created = await admin([
      "webhook",
      "create",
      "http://127.0.0.1:9/hook",
      "--events",
      "job.failed,cluster.lost",
      "--queues",
      "vision",
      "-l",
      "pipeline=nightly",
      "--allow-private-targets",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const [, id] = /^id: ([0-9a-f-]{36})$/m.exec(created.stdout)!;
    expect(created.stdout).toMatch(/^secret: whsec_[\w-]{43}$/m);
    expect(created.stderr).toContain("shown this once");

    const listed = await admin(["webhook", "list"]);
    expect(listed.stdout).toMatch(/ID\s+URL\s+EVENTS\s+QUEUES\s+STATE\s+CREATED BY/);
    expect(listed.stdout).toMatch(
      new RegExp(
        `${id}\\s+http://127\\.0\\.0\\.1:9/hook\\s+job\\.failed,cluster\\.lost\\s+vision\\s+enabled`,
      ),
    );
    const json = JSON.parse((await admin(["-o", "json", "webhook", "list"])).stdout);
    expect(json).toEqual([
      expect.objectContaining({
        id,
        labels: [{ key: "pipeline", values: ["nightly"] }],
        allowPrivateTargets: true,
      }),
    ]);
    expect(JSON.stringify(json)).not.toContain("whsec_");

    // A cluster lost, fanned out as the workers do: one pending delivery in the log.
    const store = t.server.store;
    await recordEvents(store, { name: "test" }, [
      { kind: "cluster.lost", cluster: "c9", message: "cluster c9 lost" },
    ]);
    await fanOutWebhookEvents(store, { limit: 100, link: null });
    const log = await admin(["webhook", "deliveries", id!]);
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toMatch(/ID\s+EVENT\s+JOB\s+STATE\s+ATTEMPTS\s+CODE\s+ERROR\s+CREATED/);
    expect(log.stdout).toMatch(/cluster\.lost\s+-\s+PENDING\s+0\s+-\s+-/);
    expect((await admin(["webhook", "deliveries", id!, "--state", "failed"])).stdout).not.toMatch(
      /cluster\.lost/,
    );

    const enabled = await admin(["webhook", "enable", id!]);
    expect(enabled.stdout).toContain(`webhook ${id} enabled`);
    expect((await admin(["webhook", "delete", id!])).stdout).toContain(`webhook ${id} deleted`);
    expect(JSON.parse((await admin(["-o", "json", "webhook", "list"])).stdout)).toEqual([]);
    const again = await admin(["webhook", "delete", id!]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/webhook .* not found/);
  });

  it("refusals name what is wrong: the scheme, a loopback target, a MEMBER outside its queues", async () => {
    const ftp = await admin(["webhook", "create", "ftp://192.0.2.1/x", "--events", "job.failed"]);
    expect(ftp.code).toBe(3);
    expect(ftp.stderr).toMatch(/input\.url: the scheme must be http or https, not ftp/);
    const loop = await as(member)([
      "webhook",
      "create",
      "http://127.0.0.1:9/hook",
      "--events",
      "job.failed",
      "--queues",
      "vision",
    ]);
    expect(loop.code).toBe(3);
    expect(loop.stderr).toMatch(/input\.url: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback address/);
    const outside = await as(member)([
      "webhook",
      "create",
      "http://192.0.2.1/hook",
      "--events",
      "job.failed",
      "--queues",
      "speech",
    ]);
    expect(outside.code).toBe(3);
    expect(outside.stderr).toMatch(/may use queues vision and below, not speech/);
    const noEvents = await admin(["webhook", "create", "http://192.0.2.1/hook"]);
    expect(noEvents.code).not.toBe(0);
    expect(noEvents.stderr).toMatch(/needs --events/);
  });
});
