// The Dockerfile's final stage carried out without a container engine: in a temporary directory
// standing for its WORKDIR, each instruction is done as the engine would do it — files copied
// from the build context (minus .dockerignore), the build stage's dist/ taken from the repository
// (`npm run build` made it, as the build stage's last RUN does), RUN commands run by a shell in
// that directory with the stage's ENV; ENTRYPOINT, CMD and USER are recorded (running the
// image's commands is the caller's part). What cannot apply outside a container is skipped and
// listed (`mkdir`/`chown`/`chmod` of absolute paths outside the WORKDIR, i.e. the system's
// folders); an instruction, flag or form the replay does not know is refused, so that a Dockerfile
// that grows something new fails the test until the replay learns it.
import {
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import path from "node:path";
import { runToEnd, type ShellResult } from "../helpers/run-to-end.js";

export interface Instruction {
  keyword: string;
  args: string;
  line: number;
}

export interface Stage {
  image: string;
  name: string | null;
  instructions: Instruction[];
}

/** The stages of a Dockerfile: comments dropped, continued lines joined, keywords upper-cased. */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const first = i + 1;
    let line = lines[i]!;
    if (/^\s*#\s*(escape|syntax|check)\s*=/i.test(line) && stages.length === 0) {
      throw new Error(`Dockerfile:${first}: the replay does not know parser directives: ${line.trim()}`);
    }
    if (/^\s*(#|$)/.test(line)) continue;
    // a line ending in a backslash continues on the next; comment lines inside are dropped
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, " ");
      const next = lines[++i]!;
      if (!/^\s*#/.test(next)) line += next;
    }
    const m = /^\s*(\S+)\s*(.*?)\s*$/.exec(line)!;
    const instruction = { keyword: m[1]!.toUpperCase(), args: m[2]!, line: first };
    if (instruction.keyword === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args);
      if (!from || from[1]!.startsWith("--")) {
        throw new Error(`Dockerfile:${first}: the replay does not know this FROM: ${instruction.args}`);
      }
      stages.push({ image: from[1]!, name: from[2] ?? null, instructions: [] });
      continue;
    }
    if (!stages.length) throw new Error(`Dockerfile:${first}: ${instruction.keyword} before FROM`);
    stages.at(-1)!.instructions.push(instruction);
  }
  return stages;
}

/** .dockerignore's patterns as a test of a context-relative path (a directory's match covers what is in it). */
export function dockerignore(text: string): (relPath: string) => boolean {
  const patterns = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((p) => {
      if (p.startsWith("!")) throw new Error(`.dockerignore: the replay does not know exceptions: ${p}`);
      if (/[[\\]/.test(p)) throw new Error(`.dockerignore: the replay does not know this pattern: ${p}`);
      const clean = path.posix.normalize(p.replace(/^\/+/, "")).replace(/\/+$/, "");
      const source = clean
        .split("/")
        .map((part) =>
          part === "**"
            ? ".*"
            : part
                .replace(/[.+^${}()|]/g, "\\$&")
                .replace(/\*/g, "[^/]*")
                .replace(/\?/g, "[^/]"),
        )
        .join("/")
        .replace(/\.\*\//g, "(?:.*/)?");
      return new RegExp(`^${source}$`);
    });
  return (rel) => {
    const parts = rel.split("/");
    for (let n = 1; n <= parts.length; n++) {
      const prefix = parts.slice(0, n).join("/");
      if (patterns.some((re) => re.test(prefix))) return true;
    }
    return false;
  };
}

export interface ReplayOptions {
  /** The build context (the repository). */
  context: string;
  /** The empty directory standing for the final stage's WORKDIR. */
  dir: string;
  /** The environment RUN commands start from before the stage's ENV (the base image's: PATH, HOME). */
  baseEnv: Record<string, string>;
  runTimeoutMs: number;
}

export interface ReplayedImage {
  workdir: string;
  /** The stage's ENV, in order. */
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
  /** USER: whom the commands run as in the image (null: root). */
  user: string | null;
  exposed: number[];
  /** What was not carried out, and why. */
  skipped: string[];
  /** Each RUN command carried out, with its output. */
  runs: { command: string; result: ShellResult }[];
}

type Step =
  | { kind: "workdir"; path: string }
  | { kind: "env"; vars: [string, string][] }
  | { kind: "copy"; from: string | null; sources: string[]; dest: string }
  | { kind: "run"; command: string; skipped: string[] }
  | { kind: "exec"; which: "entrypoint" | "cmd"; argv: string[] }
  | { kind: "expose"; ports: number[] }
  | { kind: "user"; name: string };

const SYSTEM_PATH_COMMANDS = new Set(["mkdir", "chown", "chmod"]);

/**
 * The final stage's instructions as steps, every one checked before anything is carried out: an
 * instruction, flag or form the replay does not know throws here.
 */
export function planFinalStage(stages: Stage[]): { stage: Stage; steps: Step[] } {
  const stage = stages.at(-1);
  if (!stage) throw new Error("Dockerfile: no FROM");
  let workdir: string | null = null;
  let user: string | null = null;
  const steps: Step[] = [];
  for (const ins of stage.instructions) {
    const where = `Dockerfile:${ins.line}: ${ins.keyword} ${ins.args}`;
    const refuse = (why: string): never => {
      throw new Error(`${where}\n  the replay does not know ${why}`);
    };
    if (ins.keyword !== "WORKDIR" && workdir === null && ["COPY", "RUN"].includes(ins.keyword)) {
      refuse(`${ins.keyword} before WORKDIR`);
    }
    if (/\$/.test(ins.args) && ins.keyword !== "RUN") refuse("variable substitution outside RUN");
    switch (ins.keyword) {
      case "WORKDIR": {
        if (!ins.args.startsWith("/") || /\s/.test(ins.args)) refuse("a relative or quoted WORKDIR");
        if (workdir !== null && ins.args !== workdir) refuse("a second WORKDIR");
        workdir = ins.args;
        steps.push({ kind: "workdir", path: ins.args });
        break;
      }
      case "ENV": {
        const vars: [string, string][] = [];
        const re = /\s*([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/y;
        let rest = ins.args;
        for (;;) {
          re.lastIndex = 0;
          const m = re.exec(rest);
          if (!m) break;
          const raw = m[2]!;
          vars.push([m[1]!, raw.startsWith('"') ? JSON.parse(raw) : raw]);
          rest = rest.slice(m[0].length);
        }
        if (!vars.length || rest.trim()) refuse("this ENV form (KEY=value pairs only)");
        steps.push({ kind: "env", vars });
        break;
      }
      case "COPY": {
        const words = ins.args.split(/\s+/);
        if (ins.args.startsWith("[")) refuse("COPY's JSON form");
        let from: string | null = null;
        while (words[0]?.startsWith("--")) {
          const flag = words.shift()!;
          const m = /^--from=(\S+)$/.exec(flag);
          if (!m) refuse(`the COPY flag ${flag}`);
          from = m![1]!;
        }
        if (words.length < 2) refuse("a COPY without a source and a destination");
        const dest = words.pop()!;
        if (words.some((s) => /[*?[]/.test(s))) refuse("wildcards in COPY sources");
        if (words.length > 1 && !dest.endsWith("/"))
          refuse("several COPY sources into a destination without /");
        steps.push({ kind: "copy", from, sources: words, dest });
        break;
      }
      case "RUN": {
        if (ins.args.startsWith("[") || ins.args.startsWith("--")) refuse("RUN's JSON form or flags");
        if (user !== null) refuse("a RUN after USER (it runs as the tests' user)");
        const kept: string[] = [];
        const skipped: string[] = [];
        for (const part of ins.args.split(/\s&&\s/).map((p) => p.trim())) {
          const words = part.split(/\s+/);
          const operands = words.slice(1).filter((w) => !w.startsWith("-"));
          if (words[0] !== "mkdir") operands.shift(); // chown's owner, chmod's mode
          const system =
            SYSTEM_PATH_COMMANDS.has(words[0]!) &&
            operands.length > 0 &&
            operands.every((p) => p.startsWith("/") && p !== workdir && !p.startsWith(`${workdir}/`));
          (system ? skipped : kept).push(part);
        }
        steps.push({ kind: "run", command: kept.join(" && "), skipped });
        break;
      }
      case "USER":
        if (!/^[a-z_][a-z0-9_-]*$/.test(ins.args)) refuse("a USER other than a user's name");
        user = ins.args;
        steps.push({ kind: "user", name: ins.args });
        break;
      case "EXPOSE": {
        const ports = ins.args
          .split(/\s+/)
          .map((p) => (/^\d+(\/tcp)?$/.test(p) ? Number.parseInt(p, 10) : NaN));
        if (ports.some((p) => Number.isNaN(p))) refuse("this EXPOSE form");
        steps.push({ kind: "expose", ports });
        break;
      }
      case "ENTRYPOINT":
      case "CMD": {
        if (!ins.args.startsWith("[")) refuse(`${ins.keyword}'s shell form`);
        const argv = JSON.parse(ins.args) as unknown;
        if (!Array.isArray(argv) || !argv.every((a) => typeof a === "string")) refuse("this exec form");
        steps.push({
          kind: "exec",
          which: ins.keyword === "CMD" ? "cmd" : "entrypoint",
          argv: argv as string[],
        });
        break;
      }
      default:
        refuse(`the instruction ${ins.keyword}`);
    }
  }
  return { stage, steps };
}

/** Copies a file or a directory's contents as COPY does, leaving out what `ignored` names (context-relative). */
function copyInto(src: string, dest: string, rel: string | null, ignored: (rel: string) => boolean): void {
  if (rel !== null && ignored(rel)) return;
  if (statSync(src).isDirectory()) {
    mkdirSync(dest, { recursive: true });
    for (const entry of readdirSync(src)) {
      copyInto(
        path.join(src, entry),
        path.join(dest, entry),
        rel === null ? null : rel ? `${rel}/${entry}` : entry,
        ignored,
      );
    }
  } else {
    mkdirSync(path.dirname(dest), { recursive: true });
    cpSync(src, dest, { verbatimSymlinks: true });
  }
}

/**
 * The build stage's files that `COPY --from` takes: the replay knows one, the dist/ that the
 * build stage's `npm run build` writes in its WORKDIR — the repository's own dist/, made the same way.
 */
function fromBuildStage(stages: Stage[], name: string, source: string, context: string): string {
  const stage = stages.find((s) => s.name === name);
  if (!stage || stage === stages.at(-1))
    throw new Error(`COPY --from=${name}: no earlier stage of that name`);
  const workdirs = stage.instructions.filter((i) => i.keyword === "WORKDIR").map((i) => i.args);
  const builds = stage.instructions.some((i) => i.keyword === "RUN" && /\bnpm run build\b/.test(i.args));
  if (workdirs.length !== 1 || !builds || source !== path.posix.join(workdirs[0]!, "dist")) {
    throw new Error(
      `COPY --from=${name} ${source}: the replay knows the dist/ of a stage whose one WORKDIR runs \`npm run build\` only`,
    );
  }
  return path.join(context, "dist");
}

/** Carries the final stage out in `opts.dir` (see the file's comment). */
export async function replayFinalStage(dockerfileText: string, opts: ReplayOptions): Promise<ReplayedImage> {
  const stages = parseDockerfile(dockerfileText);
  const { steps } = planFinalStage(stages);
  const ignorePath = path.join(opts.context, ".dockerignore");
  const ignored = dockerignore(existsSync(ignorePath) ? readFileSync(ignorePath, "utf8") : "");
  const image: ReplayedImage = {
    workdir: "",
    env: {},
    entrypoint: [],
    cmd: [],
    user: null,
    exposed: [],
    skipped: [],
    runs: [],
  };
  for (const step of steps) {
    switch (step.kind) {
      case "workdir":
        image.workdir = step.path;
        break;
      case "env":
        for (const [k, v] of step.vars) image.env[k] = v;
        break;
      case "copy": {
        const destDir = step.dest.endsWith("/") || step.dest === ".";
        for (const source of step.sources) {
          const target = path.resolve(opts.dir, step.dest);
          if (target !== opts.dir && !target.startsWith(`${opts.dir}${path.sep}`)) {
            throw new Error(`COPY ${source} ${step.dest}: outside the WORKDIR`);
          }
          if (step.from !== null) {
            copyInto(fromBuildStage(stages, step.from, source, opts.context), target, null, () => false);
            continue;
          }
          const rel = path.posix.normalize(source).replace(/^(\.\/)+|\/+$/g, "");
          if (rel.startsWith("..") || path.isAbsolute(rel))
            throw new Error(`COPY ${source}: outside the context`);
          const src = path.join(opts.context, rel);
          if (!existsSync(src) || ignored(rel)) throw new Error(`COPY ${source}: not in the build context`);
          const into = statSync(src).isFile() && destDir ? path.join(target, path.basename(rel)) : target;
          copyInto(src, into, rel, ignored);
        }
        break;
      }
      case "run": {
        image.skipped.push(...step.skipped.map((s) => `RUN ${s}: a system folder, outside the WORKDIR`));
        if (!step.command) break;
        const result = await runToEnd("/bin/sh", ["-c", step.command], {
          cwd: opts.dir,
          env: { ...opts.baseEnv, ...image.env },
          timeoutMs: opts.runTimeoutMs,
        });
        image.runs.push({ command: step.command, result });
        if (result.code !== 0) {
          throw new Error(`RUN ${step.command}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
        }
        break;
      }
      case "exec":
        image[step.which] = step.argv;
        // as in Docker, a new ENTRYPOINT resets CMD
        if (step.which === "entrypoint") image.cmd = [];
        break;
      case "expose":
        image.exposed.push(...step.ports);
        break;
      case "user":
        image.user = step.name;
        break;
    }
  }
  return image;
}

/**
 * Hard links of an npm cache's downloaded packages (immutable, content-addressed) into a fresh
 * cache, so that the replay's `npm ci` need not download again what this checkout's install did;
 * the index is copied. A cache that cannot be linked is left out (npm then downloads).
 */
export function seedNpmCache(fromCache: string, toCache: string): number {
  const from = path.join(fromCache, "_cacache");
  const to = path.join(toCache, "_cacache");
  if (!existsSync(path.join(from, "content-v2")) || !existsSync(path.join(from, "index-v5"))) return 0;
  let linked = 0;
  try {
    cpSync(path.join(from, "index-v5"), path.join(to, "index-v5"), { recursive: true });
    const walk = (rel: string) => {
      for (const entry of readdirSync(path.join(from, rel), { withFileTypes: true })) {
        const r = path.join(rel, entry.name);
        if (entry.isDirectory()) {
          mkdirSync(path.join(to, r), { recursive: true });
          walk(r);
        } else if (entry.isFile()) {
          linkSync(path.join(from, r), path.join(to, r));
          linked++;
        }
      }
    };
    mkdirSync(path.join(to, "content-v2"), { recursive: true });
    walk("content-v2");
  } catch {
    rmSync(toCache, { recursive: true, force: true });
    return 0;
  }
  return linked;
}
