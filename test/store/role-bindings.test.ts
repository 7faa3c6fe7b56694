// Role bindings in the store: a person's principal is the union of the live bindings naming their
// subject or e-mail or any of their groups; deleted bindings count for nothing.
import { sql } from "../helpers/db.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createQueue,
  createRoleBinding,
  deleteRoleBinding,
  listRoleBindings,
  NotFoundError,
  principalOfIdentity,
} from "../../src/store/index.js";
import { openTestStore, type TestStore } from "../helpers/store.js";

let ts: TestStore;
const actor = { name: "ops@example.com" };
const who = (subject: string, groups: string[] = [], email: string | null = null) => ({
  subject,
  email,
  groups,
});

beforeAll(async () => {
  ts = await openTestStore();
  for (const name of ["a", "b", "c"]) await createQueue(ts.store, actor, { name });
});
afterAll(() => ts?.close());

describe("principalOfIdentity", () => {
  it("unions MEMBER bindings; ADMIN wins; VIEWER only without either", async () => {
    await createRoleBinding(ts.store, actor, { group: "g1", role: "MEMBER", queues: ["a"] });
    await createRoleBinding(ts.store, actor, { group: "g2", role: "MEMBER", queues: ["b", "a"] });
    await createRoleBinding(ts.store, actor, { group: "g3", role: "VIEWER" });
    const admin = await createRoleBinding(ts.store, actor, { subject: "boss@example.com", role: "ADMIN" });
    expect(await principalOfIdentity(ts.store, who("u1", ["g3"]))).toMatchObject({
      role: "VIEWER",
      queues: [],
    });
    expect(await principalOfIdentity(ts.store, who("u1", ["g1", "g2", "g3"]))).toMatchObject({
      role: "MEMBER",
      queues: ["a", "b"],
      name: "u1",
      subject: "u1",
    });
    // A subject binding matches the e-mail claim too.
    expect(await principalOfIdentity(ts.store, who("x9", ["g1"], "boss@example.com"))).toMatchObject({
      role: "ADMIN",
      queues: [],
      name: "boss@example.com",
    });
    await deleteRoleBinding(ts.store, actor, { id: admin.id });
    expect((await principalOfIdentity(ts.store, who("x9", ["g1"], "boss@example.com")))?.role).toBe("MEMBER");
    expect(await principalOfIdentity(ts.store, who("nobody", ["other"]))).toBeNull();
  });

  it("delete: NOT_FOUND when unknown or already deleted; list shows live bindings only; audited", async () => {
    const b = await createRoleBinding(ts.store, actor, { subject: "temp", role: "VIEWER" });
    await deleteRoleBinding(ts.store, actor, { id: b.id });
    await expect(deleteRoleBinding(ts.store, actor, { id: b.id })).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      deleteRoleBinding(ts.store, actor, { id: "01900000-0000-7000-8000-000000000000" }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect((await listRoleBindings(ts.store)).some((x) => x.id === b.id)).toBe(false);
    const events = await sql<{ actor: string; message: string }>(
      ts.testDb.url,
      "SELECT actor, message FROM event WHERE kind LIKE 'rolebinding.%'",
    );
    expect(events.every((e) => e.actor === "ops@example.com")).toBe(true);
    expect(events.map((e) => e.message)).toContain("role binding subject temp → VIEWER deleted");
  });
});
