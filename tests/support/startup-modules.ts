/**
 * Which of magi-code's modules the real entry has loaded when it writes the
 * `initialize` answer, per runtime, and the budget
 * `tests/startup-budget.test.ts` holds them to (docs/architecture.md,
 * "Start-up budget"). `bench/cold-start.mjs` prints the same lists.
 *
 * How: the child runs with its runtime's own module log on stderr, and
 * stderr shares stdout's pipe, so the log lines written before the answer's
 * line name exactly the modules loaded before the answer was written; the
 * child then answers an idle `status` and `shutdown`, and the whole log up
 * to its exit names all an idle child ever loads (code put off to just
 * after the answer shows there). Node's `NODE_DEBUG=module` logs
 * `load "<path>" for module` as each CommonJS file loads (the bin and its
 * start-up chunk) and `NODE_DEBUG=esm` "Storing <url> … in ModuleLoadMap"
 * as each ES module job is created (the lazy chunks); the npm entry is a
 * bundle, so each loaded file is mapped to its sources with
 * `dist/bundle-inputs.json` (scripts/bundle.mjs). Deno's `--log-level=debug`
 * logs "… code cache … for ES module: <url>," as each module is compiled,
 * and "FileFetcher::fetch_no_follow - specifier: <url>" as each file is read
 * (without the launch flag of runtime/deno-launch.ts its module graph reads
 * every statically named file up front, dynamic imports included, but
 * compiles and evaluates only what is imported).
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_LAUNCH_ENV, DENO_LAUNCH_FLAGS } from "../../runtime/deno-launch.ts";
import { SERVE_FLAGS } from "../../runtime/permissions.ts";
import { guarded } from "./hang-guard.ts";
import { denoBinary, nodeBinary, repoRoot } from "./processes.ts";

/** What had loaded when the `initialize` answer was written. */
export interface StartupModules {
  /** Our modules, as repository paths of their sources (`src/…`, `runtime/…`), sorted. */
  readonly own: readonly string[];
  /** npm packages, sorted. */
  readonly packages: readonly string[];
  /** Deno's Node-compat modules (`ext:deno_node/…`, `node:…`); always 0 on Node. */
  readonly compat: number;
  /** Node: the files of the bundle loaded (the entry and its chunks); Deno runs the sources, so 0. */
  readonly files: number;
  /**
   * Deno: our source files its module loader had read, compiled or not (its module graph reads
   * every file a static `import()` names unless launched with `--unstable-lazy-dynamic-imports`);
   * Node reads only the bundle files it loads, so 0.
   */
  readonly read: number;
}

/**
 * The start-up budget: at most this many of our modules (and, on Deno,
 * Node-compat modules) when the `initialize` answer is written. Raise a
 * figure only in a commit that says why the new module cannot load on first
 * use instead. Deno's 22 compat modules are what its global `setTimeout`
 * loads (node:timers and its errors), which any timer pays. `packages` are
 * the only npm packages that may load: no provider SDK, no MCP SDK.
 */
export const STARTUP_BUDGET = {
  // 61: runtime/node-main.ts, the module the entry imports once Node's compile cache is on.
  // 62: src/config/agent-settings.ts, the `agent` section every settings parse needs, with the
  // built-in profiles and the listing that tells startup whether any profile file exists.
  // 63: src/config/compaction-settings.ts, the schema of `agent.compaction` and of an endpoint's
  // `context_window`, which startup must check before it answers (a bad value is configuration_invalid).
  // 64, 65: src/config/instructions-bounds.ts and instructions-section.ts, the instructions chain's
  // total bound and the prompt text it measures (headings and notices count, so a repository cannot
  // grow the prompt past the bound); startup reads the chain before it answers, and both were split
  // out of instructions.ts only to keep each file under 300 lines.
  // 66: src/config/title-settings.ts, the schema of `agent.titles`, checked with the rest of `agent`.
  // 67, 68: runtime/node-builtin.ts and runtime/node-crypto.ts, which take `node:child_process`,
  // `node:crypto` (with Web Crypto) and `node:os` on first use instead: about 30 built-in modules and
  // 2 ms less before the answer.
  // 69: src/util/sha256.ts, which hashes the small inputs start-up hashes (on both runtimes) in
  // place of @noble/hashes, whose SHA-2 module builds SHA-512's BigInt tables as it loads (~4 ms on Deno).
  // files: the CommonJS bin and its start-up chunk; scripts/bundle.mjs packs the start-up graph
  // (26 files once split by lazy chunk, then 4 ES modules while the start-up half was one).
  node: { own: 69, compat: 0, files: 2, read: 0, packages: ["jsonc-parser", "valibot"] },
  // Deno takes jsonc-parser vendored (runtime/jsonc-parser.deno.mjs); 69: src/util/sha256.ts, as on Node.
  // read: no file is read that is not compiled (255 before runtime/deno-launch.ts's lazy dynamic imports).
  deno: { own: 69, compat: 22, files: 0, read: 69, packages: ["valibot"] },
} as const;

/** Modules that must never load before the `initialize` answer, whatever the budget. */
export const NEVER_AT_STARTUP: readonly RegExp[] = [
  /^src\/(store|runner|sandbox|fuzz|client)\//,
  /^src\/operations\/(workers|catalog-operations)\.ts$/,
  /^src\/operations\/(sessions|turns|cancel|selection)\//,
  /^src\/protocol\/json-schema\.ts$/,
  /^src\/admission\/config-check/,
  // A child whose settings list no hook loads none of the hooks code.
  /^src\/(hooks\/|config\/hooks-settings\.ts$|admission\/hooks-)/,
];

const ID = "startup-budget";
const line = (id: string, method: string, params: Record<string, unknown>) =>
  `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`;

/** The package a `node_modules` path belongs to. */
function packageOf(path: string): string {
  const parts = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length).split("/");
  return parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

function summarise(sources: Iterable<string>, compat: number, files: number, read = 0): StartupModules {
  const own = new Set<string>();
  const packages = new Set<string>();
  for (const source of sources) {
    if (source.includes("node_modules/")) packages.add(packageOf(source));
    else own.add(source);
  }
  return { own: [...own].sort(), packages: [...packages].sort(), compat, files, read };
}

/** The sources behind the files of the Node bundle that `log` shows loaded. */
function nodeSources(log: string): StartupModules {
  const root = repoRoot();
  const dist = join(root, "dist");
  const inputs = JSON.parse(readFileSync(join(dist, "bundle-inputs.json"), "utf8")) as Record<string, string[]>;
  const sources: string[] = [];
  const files = new Set<string>();
  const loads = [...log.matchAll(/Storing (file:\/\/\S+)|load "(\/[^"]+)" for module/g)];
  for (const [, url, path] of loads) {
    const file = relative(dist, url === undefined ? path! : fileURLToPath(url));
    const held = inputs[file];
    if (held === undefined) throw new Error(`${file} is not in dist/bundle-inputs.json: rebuild with scripts/bundle.mjs`);
    files.add(file);
    sources.push(...held);
  }
  return summarise(sources, 0, files.size);
}

/** The sources and compat modules `log` shows Deno compiled. */
function denoSources(log: string): StartupModules {
  const root = repoRoot();
  const sources: string[] = [];
  const compat = new Set<string>();
  for (const [, url] of log.matchAll(/for ES module: (\S+?),/g)) {
    if (url!.startsWith("file://")) sources.push(relative(root, fileURLToPath(url!)));
    else if (url!.startsWith("ext:deno_node/") || url!.startsWith("node:")) compat.add(url!);
  }
  const read = new Set<string>();
  for (const [, url] of log.matchAll(/fetch_no_follow - specifier: (file:\S+)/g)) {
    if (!url!.includes("/node_modules/")) read.add(url!);
  }
  return summarise(sources, compat.size, 0, read.size);
}

/** What had loaded when the `initialize` answer was written, and by the exit of the same idle child. */
export interface StartupRecord extends StartupModules {
  /** Everything loaded by the child's exit, after an idle `status` and `shutdown`: the same as at the answer. */
  readonly untilExit: StartupModules;
}

/**
 * Spawns the real entry of `runtime` (the npm bin under Node; `runtime/deno.ts`
 * with the documented narrow permission set and launch flags and environment
 * under Deno) on a fresh `MC_HOME`,
 * sends `initialize`, then `status` once it is answered and `shutdown` once
 * that is, and returns what had loaded when the `initialize` answer was
 * written and what had by the exit: code loaded just after the answer (a
 * warm-up on a timer) shows in the second.
 */
export async function modulesAtInitialize(runtime: "node" | "deno"): Promise<StartupRecord> {
  const root = repoRoot();
  const base = mkdtempSync(join(tmpdir(), "magi-startup-modules-"));
  const cwd = join(base, "work");
  mkdirSync(cwd);
  const command = runtime === "node"
    ? [nodeBinary(), join(root, "dist", "magi-code.cjs")]
    : [denoBinary(), "run", ...SERVE_FLAGS, ...DENO_LAUNCH_FLAGS, "--log-level=debug", join(root, "runtime", "deno.ts")];
  // A HOME of its own: a developer's ~/.agents/skills (or anything else under the real home) would load
  // the code a child without it never loads. Deno keeps its usual cache, which lives under the real home.
  const env = {
    ...process.env,
    HOME: join(base, "user"),
    MC_HOME: join(base, "home"),
    ...(runtime === "node" ? { NODE_DEBUG: "esm,module" } : { ...DENO_LAUNCH_ENV, DENO_DIR: process.env.DENO_DIR ?? join(homedir(), ".cache", "deno") }),
  };
  // stderr joins stdout: one pipe keeps the order in which the log and the answers were written.
  const child = spawn("sh", ["-c", 'exec "$@" serve --stdio 2>&1', "sh", ...command], { cwd, env, stdio: ["pipe", "pipe", "ignore"] });
  child.stdin!.write(line(ID, "initialize", { required_capabilities: [] }));
  try {
    const { before, whole } = await guarded(new Promise<{ before: string; whole: string }>((resolve, reject) => {
      let text = "";
      let before: string | null = null;
      let status = false;
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => {
        text += chunk;
        const at = before === null ? text.indexOf(`"id":"${ID}"`) : -1;
        if (at !== -1) {
          before = text.slice(0, text.lastIndexOf("\n", at) + 1);
          child.stdin!.write(line(`${ID}-status`, "status", {}));
        }
        if (!status && text.includes(`"id":"${ID}-status"`)) {
          status = true;
          child.stdin!.end(line(`${ID}-bye`, "shutdown", {}));
        }
      });
      // stdout ends when the child exits: its last log lines are in.
      child.stdout!.on("end", () => before === null || !status
        ? reject(new Error(`the child closed stdout before answering initialize and status:\n${text.slice(-2000)}`))
        : resolve({ before, whole: text }));
    }), "the child to answer and exit");
    const sources = runtime === "node" ? nodeSources : denoSources;
    return { ...sources(before), untilExit: sources(whole) };
  } finally {
    child.kill("SIGKILL");
    rmSync(base, { recursive: true, force: true });
  }
}
