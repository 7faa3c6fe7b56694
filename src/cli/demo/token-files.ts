// Demo token secrets kept as files, one per token (`<dir>/<name>.token`, mode 0600): `fleetq dev`
// finds them again after a restart, and in docker compose the agents read theirs from a volume.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class TokenFiles {
  constructor(readonly dir: string) {}

  path(name: string): string {
    return join(this.dir, `${name}.token`);
  }

  read(name: string): string | null {
    const file = this.path(name);
    if (!existsSync(file)) return null;
    const secret = readFileSync(file, "utf8").trim();
    return secret || null;
  }

  write(name: string, secret: string): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.path(name), `${secret}\n`, { mode: 0o600 });
    chmodSync(this.path(name), 0o600);
  }
}
