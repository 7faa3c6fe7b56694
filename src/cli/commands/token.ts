// `fleetq token create|revoke|list`. `token create --admin` works on the database directly
// (DATABASE_URL), for the first token of a fresh deployment, before any token exists: the server
// side provides it (program.ts), the client package only says where it is.
import type { Command } from "commander";
import { CREATE_TOKEN, LIST_TOKENS, REVOKE_TOKEN } from "../client/queries.js";
import { action, apiClientOf, outputFormat, print, printErr, printJson } from "../command-context.js";
import { CliError, EXIT } from "../exit-codes.js";
import { renderTable } from "../output/table.js";

const ROLES = ["ADMIN", "MEMBER", "VIEWER", "AGENT"] as const;

interface CreateOptions {
  name?: string;
  role?: string;
  queues?: string;
  cluster?: string;
  subject?: string;
  admin?: boolean;
  databaseUrl?: string;
}

interface TokenRow {
  id: string;
  name: string;
  role: string;
  queues: string[];
  cluster: string | null;
  createdBy: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** Writes an ADMIN token straight into the database (`token create --admin`). */
export type AdminTokenWriter = (
  databaseUrl: string | undefined,
  name: string,
) => Promise<{ id: string; secret: string }>;

export function registerToken(program: Command, writeAdminToken: AdminTokenWriter): void {
  const token = program.command("token").description("API tokens: create, revoke, list");

  token
    .command("create")
    .description("create a token; the secret is printed once (stdout), its id on stderr")
    .option("--name <name>", "who or what the token is for")
    .option("--role <role>", "ADMIN, MEMBER (needs --queues), VIEWER or AGENT (needs --cluster)")
    .option("--queues <queues>", "MEMBER: comma-separated queues it may submit to (and the queues below)")
    .option("--cluster <cluster>", "AGENT: the cluster it speaks for")
    .option(
      "--subject <subject>",
      "the person it acts for (their subject or e-mail): jobs and events name them",
    )
    .option("--admin", "bootstrap: an ADMIN token written straight into the database (no API token needed)")
    .option(
      "--database-url <url>",
      "with --admin: the database (default DATABASE_URL, else the embedded one)",
    )
    .action(
      action(async (opts: CreateOptions, cmd: Command) => {
        if (opts.admin) {
          if (opts.role && opts.role.toUpperCase() !== "ADMIN")
            throw new CliError("--admin creates ADMIN tokens; drop --role");
          const created = await writeAdminToken(opts.databaseUrl, opts.name ?? "admin");
          print(created.secret);
          printErr(
            `ADMIN token "${opts.name ?? "admin"}" created (id ${created.id}); the secret above is shown once`,
          );
          return EXIT.OK;
        }
        if (!opts.name) throw new CliError("token create needs --name");
        const role = opts.role?.toUpperCase();
        if (!role || !ROLES.includes(role as (typeof ROLES)[number])) {
          throw new CliError(
            `--role: ${opts.role ? `"${opts.role}" is not` : "give"} one of ${ROLES.join(", ")}`,
          );
        }
        const queues = opts.queues
          ?.split(",")
          .map((q) => q.trim())
          .filter(Boolean);
        const { createToken } = await apiClientOf(cmd).request<{
          createToken: { id: string; secret: string };
        }>(CREATE_TOKEN, {
          input: { name: opts.name, role, queues, cluster: opts.cluster, subject: opts.subject },
        });
        if (outputFormat(cmd) === "json") return printJson(createToken);
        print(createToken.secret);
        printErr(
          `${role} token "${opts.name}" created (id ${createToken.id}); the secret above is shown once`,
        );
      }),
    );

  token
    .command("revoke")
    .description("revoke tokens by id (see `fleetq token list`)")
    .argument("<ids...>", "token ids")
    .action(
      action(async (ids: string[], _opts: unknown, cmd: Command) => {
        const client = apiClientOf(cmd);
        for (const id of ids) {
          await client.request(REVOKE_TOKEN, { id });
          print(`token ${id} revoked`);
        }
      }),
    );

  token
    .command("list")
    .description("tokens (ADMIN only); secrets are never shown again")
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const { tokens } = await apiClientOf(cmd).request<{ tokens: TokenRow[] }>(LIST_TOKENS);
        if (outputFormat(cmd) === "json") return printJson(tokens);
        print(
          renderTable(
            [
              { header: "ID", value: (t: TokenRow) => t.id },
              { header: "NAME", value: (t) => t.name },
              { header: "ROLE", value: (t) => t.role },
              { header: "SCOPE", value: (t) => (t.queues.length ? t.queues.join(",") : (t.cluster ?? "-")) },
              { header: "CREATED", value: (t) => t.createdAt },
              { header: "REVOKED", value: (t) => t.revokedAt ?? "-" },
            ],
            tokens,
          ),
        );
      }),
    );
}
