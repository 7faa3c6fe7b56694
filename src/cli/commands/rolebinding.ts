// `fleetq rolebinding create|list|delete`: who people signed in at the identity provider are in
// fleetq (ADMIN only). A binding names a subject (or e-mail) or a group.
import type { Command } from "commander";
import { CREATE_ROLE_BINDING, DELETE_ROLE_BINDING, LIST_ROLE_BINDINGS } from "../client/queries.js";
import { action, apiClientOf, outputFormat, print, printJson } from "../command-context.js";
import { CliError } from "../exit-codes.js";
import { renderTable } from "../output/table.js";

interface CreateOptions {
  subject?: string;
  group?: string;
  role?: string;
  queues?: string;
}

interface BindingRow {
  id: string;
  subject: string | null;
  group: string | null;
  role: string;
  queues: string[];
  createdBy: string | null;
  createdAt: string;
}

const list = (s: string | undefined) =>
  s
    ?.split(",")
    .map((q) => q.trim())
    .filter(Boolean);

export function registerRoleBinding(program: Command): void {
  const rb = program
    .command("rolebinding")
    .description("role bindings of people signed in with the identity provider: create, list, delete");

  rb.command("create")
    .description("grant a role to a subject (or e-mail) or a group; prints the binding's id")
    .option("--subject <subject>", "the person: their subject or e-mail at the identity provider")
    .option("--group <group>", "everyone in this group (the token's groups claim)")
    .option("--role <role>", "admin, member (needs --queues) or viewer")
    .option("--queues <queues>", "member: comma-separated queues (and the queues below)")
    .action(
      action(async (opts: CreateOptions, cmd: Command) => {
        if (!opts.subject === !opts.group)
          throw new CliError("rolebinding create needs one of --subject or --group");
        if (!opts.role) throw new CliError("rolebinding create needs --role (admin, member or viewer)");
        const input = {
          subject: opts.subject,
          group: opts.group,
          role: opts.role.toUpperCase(),
          queues: list(opts.queues),
        };
        const { createRoleBinding } = await apiClientOf(cmd).request<{ createRoleBinding: BindingRow }>(
          CREATE_ROLE_BINDING,
          { input },
        );
        if (outputFormat(cmd) === "json") return printJson(createRoleBinding);
        print(createRoleBinding.id);
      }),
    );

  rb.command("list")
    .description("the live bindings, oldest first")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { roleBindings } = await apiClientOf(cmd).request<{ roleBindings: BindingRow[] }>(
          LIST_ROLE_BINDINGS,
        );
        if (outputFormat(cmd) === "json") return printJson(roleBindings);
        print(
          renderTable(
            [
              { header: "ID", value: (b: BindingRow) => b.id },
              { header: "WHO", value: (b) => (b.subject ? `subject ${b.subject}` : `group ${b.group}`) },
              { header: "ROLE", value: (b) => b.role },
              { header: "QUEUES", value: (b) => (b.queues.length ? b.queues.join(",") : "-") },
              { header: "CREATED BY", value: (b) => b.createdBy ?? "-" },
              { header: "CREATED", value: (b) => b.createdAt },
            ],
            roleBindings,
          ),
        );
      }),
    );

  rb.command("delete")
    .description("delete bindings by id: who they granted loses that role at once")
    .argument("<ids...>", "binding ids (see `fleetq rolebinding list`)")
    .action(
      action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const client = apiClientOf(cmd);
        for (const id of ids) {
          await client.request(DELETE_ROLE_BINDING, { id });
          print(`role binding ${id} deleted`);
        }
      }),
    );
}
