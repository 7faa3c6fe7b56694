// PostgreSQL and Redis of a topology's own, on free ports in a temporary folder: a run that
// restarts or cuts them never disturbs anyone else's servers. PostgreSQL refuses to run as
// root, so as root its processes run as the `postgres` user (setpriv, no intermediate process:
// the child is the postmaster itself and signals reach it).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { Redis } from "ioredis";

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

async function poll(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const p = path.join(root, v, "bin", name);
    if (existsSync(p)) return p;
  }
  return name; // on PATH
}

const asRoot = process.getuid?.() === 0;

const hasSetpriv = existsSync("/usr/bin/setpriv");

/** argv that runs `cmd` so that it dies with this process (even SIGKILLed: no orphan server
 * is left behind), as the postgres user if `asPostgres` and we are root. */
export function tied(
  cmd: string,
  args: string[],
  opts: { asPostgres?: boolean; signal?: string } = {},
): [string, string[]] {
  if (!hasSetpriv) return [cmd, args];
  const user = opts.asPostgres && asRoot ? ["--reuid=postgres", "--regid=postgres", "--init-groups"] : [];
  return ["setpriv", [...user, "--pdeathsig", opts.signal ?? "SIGKILL", "--", cmd, ...args]];
}

function asPostgres(cmd: string, args: string[], signal = "SIGQUIT"): [string, string[]] {
  return tied(cmd, args, { asPostgres: true, signal });
}

/** Children still running when this process exits (a crash, a timeout) are killed with it. */
const children = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

export function ownChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return once(child, "exit").then(() => {});
}

export class OwnPostgres {
  private child: ChildProcess | null = null;
  log = "";

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** initdb into a fresh temporary folder, then starts it. */
  static async start(): Promise<OwnPostgres> {
    const base = mkdtempSync(path.join(tmpdir(), "fleetq-pg-"));
    const dir = path.join(base, "data");
    mkdirSync(dir, { mode: 0o700 });
    if (asRoot) {
      const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
      const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
      chownSync(base, uid, gid);
      chownSync(dir, uid, gid);
    }
    const [cmd, args] = asPostgres(postgresBin("initdb"), [
      "-D",
      dir,
      "-U",
      "postgres",
      "--auth=trust",
      "--no-sync",
      "-E",
      "UTF8",
    ]);
    execFileSync(cmd, args, { stdio: "ignore" });
    const db = new OwnPostgres(dir, await freePort());
    await db.up();
    return db;
  }

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** A database URL on this server. */
  urlOf(database: string, applicationName?: string): string {
    const u = new URL(this.url);
    u.pathname = `/${database}`;
    if (applicationName) u.searchParams.set("application_name", applicationName);
    return u.toString();
  }

  async query<T extends pg.QueryResultRow = pg.QueryResultRow>(
    sql: string,
    params: unknown[] = [],
    database = "postgres",
  ): Promise<T[]> {
    const client = new pg.Client({ connectionString: this.urlOf(database) });
    // terminateAll cuts this very connection too: its error fails the query, never the process
    client.on("error", () => {});
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** Stops it the hard way (SIGQUIT: no checkpoint, crash recovery at the next start) and starts it again. */
  async restart(downMs = 2000): Promise<void> {
    await this.down("SIGQUIT");
    await new Promise((r) => setTimeout(r, downMs));
    await this.up();
  }

  /** pg_terminate_backend on every client connection of the server (open transactions abort). */
  async terminateAll(): Promise<number> {
    const rows = await this.query<{ n: string }>(
      "SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
    );
    return Number(rows[0]?.n ?? 0);
  }

  async stop(): Promise<void> {
    await this.down("SIGINT");
    rmSync(path.dirname(this.dir), { recursive: true, force: true });
  }

  private async up(): Promise<void> {
    const [cmd, args] = asPostgres(postgresBin("postgres"), [
      "-D",
      this.dir,
      "-p",
      String(this.port),
      "-k",
      this.dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "max_connections=200",
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "shared_buffers=64MB",
    ]);
    const child = ownChild(spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] }));
    child.stderr!.on("data", (d: Buffer) => {
      this.log = (this.log + d.toString()).slice(-20_000);
    });
    this.child = child;
    await poll(`PostgreSQL on port ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`postgres exited: ${this.log}`);
      await this.query("SELECT 1");
      return true;
    });
  }

  private async down(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child) return;
    child.kill(signal);
    await exited(child);
  }
}

export class OwnRedis {
  private child: ChildProcess | null = null;

  private constructor(
    readonly port: number,
    private readonly password?: string,
  ) {}

  /** `password` makes the default user require it (for tests of users and passwords, which
   * must never touch the shared Redis). */
  static async start(opts: { password?: string } = {}): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort(), opts.password);
    await redis.up();
    return redis;
  }

  /** As the default user, with its password when one is set. */
  get url(): string {
    return `redis://${this.password ? `:${this.password}@` : ""}127.0.0.1:${this.port}`;
  }

  /** Killed and started again empty: no persistence, so every queue, lock and key is gone. */
  async restart(downMs = 1000): Promise<void> {
    await this.down();
    await new Promise((r) => setTimeout(r, downMs));
    await this.up();
  }

  async command(...args: (string | number)[]): Promise<unknown> {
    const conn = new Redis(this.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    conn.on("error", () => {}); // the command's own rejection says it
    try {
      await conn.connect();
      return await conn.call(String(args[0]), ...args.slice(1).map(String));
    } finally {
      conn.disconnect();
    }
  }

  async stop(): Promise<void> {
    await this.down();
  }

  private async up(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    if (this.password) args.push("--requirepass", this.password);
    const child = ownChild(spawn("redis-server", args, { stdio: "ignore" }));
    this.child = child;
    await poll(`Redis on port ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error("redis-server exited");
      return (await this.command("PING")) === "PONG";
    });
  }

  private async down(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child) return;
    child.kill("SIGKILL");
    await exited(child);
  }
}
