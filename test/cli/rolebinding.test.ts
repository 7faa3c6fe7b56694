// `fleetq rolebinding create|list|delete` against the real API: the binding's id, the table, and
// refusals that name what is wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gqlOk, startTestApi, type TestApi } from "../helpers/api.js";
import { runCli } from "./run-cli.js";

let t: TestApi;
const admin = (args: string[]) => runCli(args, { url: t.url.replace(/\/graphql$/, ""), token: t.adminToken });

beforeAll(async () => {
  t = await startTestApi();
  await gqlOk(t.url, t.adminToken, `mutation { createQueue(input: { name: "vision" }) { name } }`);
}, 60_000);
afterAll(() => t?.close());

describe("fleetq rolebinding", () => {
  it("create prints the id; list shows it; delete removes it; deleting again is refused", async () => {
    const created = await admin([
      "rolebinding",
      "create",
      "--group",
      "ml-vision",
      "--role",
      "member",
      "--queues",
      "vision",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const list = await admin(["rolebinding", "list"]);
    expect(list.stdout).toMatch(/ID\s+WHO\s+ROLE\s+QUEUES/);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+group ml-vision\\s+MEMBER\\s+vision`));
    const json = JSON.parse((await admin(["-o", "json", "rolebinding", "list"])).stdout);
    expect(json).toEqual([
      expect.objectContaining({ id, group: "ml-vision", role: "MEMBER", queues: ["vision"] }),
    ]);
    expect((await admin(["rolebinding", "delete", id])).stdout).toContain(`role binding ${id} deleted`);
    expect(JSON.parse((await admin(["-o", "json", "rolebinding", "list"])).stdout)).toEqual([]);
    const again = await admin(["rolebinding", "delete", id]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/role binding .* not found/);
  });

  it("refusals name what is wrong", async () => {
    const both = await admin(["rolebinding", "create", "--subject", "a", "--group", "b", "--role", "viewer"]);
    expect(both.code).toBe(3);
    expect(both.stderr).toMatch(/one of --subject or --group/);
    const noQueues = await admin(["rolebinding", "create", "--group", "g", "--role", "member"]);
    expect(noQueues.code).toBe(3);
    expect(noQueues.stderr).toMatch(/input\.queues.*needs the queues/);
  });
});
