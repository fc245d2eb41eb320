/**
 * `instructions.paths` (docs/settings.md, "Instructions"): the schema, the
 * rule of each file (global: absolute or `~/`, anywhere; project: relative,
 * inside the workspace), startup refusing a path that breaks it with
 * `configuration_invalid`, `config check` naming the file and JSON path (in
 * process, and once through each real entry), what is read where, and the
 * notes for files startup will skip.
 */

import assert from "node:assert/strict";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import { checkConfiguration } from "../src/admission/config-check.ts";
import { runStartup } from "../src/admission/startup.ts";
import { loadInstructions } from "../src/config/instructions.ts";
import { MAX_INSTRUCTION_PATHS, pathsBreakingRule, resolveInstructionPaths } from "../src/config/instructions-settings.ts";
import { parseSettingsText } from "../src/config/settings.ts";
import { isWithin } from "../src/util/paths.ts";
import { deno } from "./support/fs-adapters.ts";
import { collect, launchers, spawnDirect } from "./support/processes.ts";
import { guarded } from "./support/hang-guard.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const HOME = "/home/user/.magi-code";
const CWD = "/work/project";
const GLOBAL_FILE = `${HOME}/settings.jsonc`;
const PROJECT_FILE = `${CWD}/.magi-code/settings.jsonc`;
const live = () => new AbortController().signal;
const disk: FileSystem = deno?.denoFileSystem ?? nodeFileSystem;

/** A memory runtime with the given settings objects (null: no file) and files. */
function runtimeWith(global: unknown, project: unknown, files: Readonly<Record<string, string>> = {}) {
  const fs = new MemoryFileSystem();
  void fs.mkdir(HOME, 0o700);
  void fs.mkdir(CWD, 0o755);
  if (global !== null) fs.writeFile(GLOBAL_FILE, JSON.stringify(global), 0o600);
  if (project !== null) fs.writeFile(PROJECT_FILE, JSON.stringify(project));
  for (const [path, text] of Object.entries(files)) fs.writeFile(path, text);
  return createMemoryRuntime({ fs, cwd: CWD, env: { HOME: "/home/user" } });
}

const paths = (list: readonly string[]) => ({ instructions: { paths: list } });

describe("instructions.paths", () => {
  it("the schema takes up to 32 well-formed paths and nothing else", () => {
    assert.ok(parseSettingsText(JSON.stringify(paths(["/a.md", "~/b.md", "docs/c.md"]))).ok);
    assert.ok(parseSettingsText(JSON.stringify({ instructions: {} })).ok);
    for (const bad of [
      paths(Array.from({ length: MAX_INSTRUCTION_PATHS + 1 }, (_, index) => `/f${index}.md`)),
      paths([""]),
      paths(["a\u0000b"]),
      paths(["line\nbreak.md"]),
      paths(["x".repeat(4097)]),
      { instructions: { paths: "/a.md" } },
      { instructions: { files: ["/a.md"] } },
      { instructions: [] },
    ]) {
      assert.deepEqual(parseSettingsText(JSON.stringify(bad)), { ok: false, code: "configuration_invalid" }, JSON.stringify(bad).slice(0, 80));
    }
  });

  it("a global path is absolute or ~/-relative; a project path is relative and never leaves the workspace", () => {
    const list = ["/abs.md", "~/home.md", "rel.md", "./docs/x.md", "../up.md", "a/../b.md", "~other/x.md", "~", "docs/..", ".hidden/..x.md"];
    assert.deepEqual(pathsBreakingRule(list, "global"), [2, 3, 4, 5, 6, 7, 8, 9]);
    assert.deepEqual(pathsBreakingRule(list, "project"), [0, 1, 4, 5, 6, 7, 8]);
  });

  it("every path follows exactly one file's rule at most, and a project path resolves inside the workspace", () => {
    const segment = fc.oneof(fc.constantFrom("..", ".", "", "~", "~x", "a", ".git"), fc.string({ maxLength: 6 }).filter((text) => !text.includes("/")));
    const path = fc.oneof(fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => parts.join("/")), fc.string({ minLength: 1, maxLength: 20 }));
    fc.assert(fc.property(path, (written) => {
      const global = pathsBreakingRule([written], "global").length === 0;
      const project = pathsBreakingRule([written], "project").length === 0;
      assert.ok(!(global && project));
      if (!project) return;
      const [resolved] = resolveInstructionPaths([written], { cwd: CWD, home: "/home/user" });
      assert.equal(resolved?.scope, "project");
      assert.ok(isWithin(CWD, resolved.path!), `${written} → ${resolved.path}`);
    }), { numRuns: fuzzRuns(500) });
  });

  it("a path breaking its file's rule fails startup with configuration_invalid, and config check names file and JSON path", async () => {
    for (const [global, project, file, at] of [
      [paths(["/ok.md", "notes.md"]), null, GLOBAL_FILE, "$.instructions.paths[1]"],
      [null, paths(["docs/ok.md", "../secret.md"]), PROJECT_FILE, "$.instructions.paths[1]"],
      [null, paths(["/etc/passwd"]), PROJECT_FILE, "$.instructions.paths[0]"],
      [null, paths(["~/.ssh/id_ed25519"]), PROJECT_FILE, "$.instructions.paths[0]"],
    ] as const) {
      const runtime = runtimeWith(global, project);
      const outcome = await runStartup(runtime, live());
      assert.equal(outcome.ok ? "ready" : outcome.code, "configuration_invalid");
      const report = await checkConfiguration(runtime);
      assert.deepEqual(report.problems.map((problem) => [problem.file, problem.path]), [[file, at]]);
      assert.match(report.problems[0]!.message, file === GLOBAL_FILE ? /must be absolute or start with ~\// : /relative to the workspace and stay inside it/);
    }
  });

  it("reads global paths anywhere (through symlinks too), ~/ from HOME, then the project's inside the workspace", async () => {
    const runtime = runtimeWith(paths(["/dotfiles/link.md", "~/notes.md"]), paths(["docs/extra.md"]), {
      "/elsewhere/real.md": "global path",
      "/home/user/notes.md": "home path",
      [`${CWD}/docs/extra.md`]: "project path",
      [`${CWD}/AGENTS.md`]: "workspace",
    });
    runtime.fs.symlink("/elsewhere/real.md", "/dotfiles/link.md");
    const outcome = await runStartup(runtime, live());
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.snapshot.settings.instructions, paths(["/dotfiles/link.md", "~/notes.md", "docs/extra.md"]).instructions);
    assert.deepEqual(outcome.snapshot.instructions.map((file) => [file.source, file.path, file.text]), [
      ["project", `${CWD}/AGENTS.md`, "workspace"],
      ["path", "/dotfiles/link.md", "global path"],
      ["path", "/home/user/notes.md", "home path"],
      ["path", `${CWD}/docs/extra.md`, "project path"],
    ]);
    assert.deepEqual((await checkConfiguration(runtime)).notes, []);
  });

  it("skips a project path leaving the workspace through a symlink, a symlinked directory or into MC_HOME, and config check notes each", async () => {
    const runtime = runtimeWith(paths(["/missing.md"]), paths(["link.md", "docs/id_ed25519", "store.md", "gone.md", "fifo.md"]), {
      "/secret/id_ed25519": "secret",
      [`${HOME}/private.md`]: "private",
    });
    runtime.fs.symlink("/secret/id_ed25519", `${CWD}/link.md`);
    runtime.fs.symlink("/secret", `${CWD}/docs`);
    runtime.fs.symlink(`${HOME}/private.md`, `${CWD}/store.md`);
    runtime.fs.mkfifo(`${CWD}/fifo.md`);
    const outcome = await runStartup(runtime, live());
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.snapshot.instructions, []);
    const report = await checkConfiguration(runtime);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.notes.map((note) => [note.file, note.path, note.message.split(":")[0]]), [
      [GLOBAL_FILE, "$.instructions.paths[0]", "names no file"],
      [PROJECT_FILE, "$.instructions.paths[0]", "resolves outside its root (the project root for AGENTS.md, or its own directory when that root is your home or above it; the workspace for a project path) or inside MC_HOME"],
      [PROJECT_FILE, "$.instructions.paths[1]", "resolves outside its root (the project root for AGENTS.md, or its own directory when that root is your home or above it; the workspace for a project path) or inside MC_HOME"],
      [PROJECT_FILE, "$.instructions.paths[2]", "resolves outside its root (the project root for AGENTS.md, or its own directory when that root is your home or above it; the workspace for a project path) or inside MC_HOME"],
      [PROJECT_FILE, "$.instructions.paths[3]", "names no file"],
      [PROJECT_FILE, "$.instructions.paths[4]", "is not a regular file (a directory, FIFO or device)"],
    ]);
    // Notes never quote a file's content.
    assert.ok(!JSON.stringify(report).includes("secret\""));
  });

  it("on disk, skips a hard-linked project path but reads a hard-linked global one", async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), "magi-instruction-paths-")));
    try {
      mkdirSync(join(base, "mc"));
      mkdirSync(join(base, "ws"));
      writeFileSync(join(base, "outside.md"), "linked");
      linkSync(join(base, "outside.md"), join(base, "ws", "linked.md"));
      const where = { cwd: join(base, "ws"), home: base };
      const resolved = resolveInstructionPaths([join(base, "ws", "linked.md"), "linked.md"], where);
      const loaded = await loadInstructions(disk, { home: join(base, "mc"), userHome: null, cwd: where.cwd, root: where.cwd, paths: resolved }, live());
      assert.deepEqual(loaded.files.map((file) => [file.source, file.text]), [["path", "linked"]]);
      assert.deepEqual(loaded.skipped.map((skipped) => [skipped.index, skipped.reason]), [[1, "hard_link"]]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

const scratchRoot = realpathSync(mkdtempSync(join(tmpdir(), "magi-instructions-cli-")));
after(() => rmSync(scratchRoot, { recursive: true, force: true }));

for (const launcher of launchers()) {
  describe(`${launcher.name}: instructions.paths through the real entry`, () => {
    it("config check prints a project path leaving the workspace as file: JSON path: rule, and exits 1", async () => {
      const home = join(scratchRoot, `${launcher.name}-home`);
      const cwd = join(scratchRoot, `${launcher.name}-cwd`);
      mkdirSync(join(cwd, ".magi-code"), { recursive: true });
      mkdirSync(home, { recursive: true });
      writeFileSync(join(cwd, ".magi-code", "settings.jsonc"), JSON.stringify(paths(["../outside.md"])));
      const child = spawnDirect(launcher, ["config", "check"], { cwd, env: { ...process.env, MC_HOME: home } });
      child.stdin.end();
      const [stdout, , code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, "config check")]);
      assert.equal(code, 1);
      assert.deepEqual(stdout.trimEnd().split("\n"), [
        `${join(cwd, ".magi-code", "settings.jsonc")}: $.instructions.paths[0]: a path in a project file must be relative to the workspace and stay inside it (no '..', no absolute path, no ~); see docs/settings.md`,
      ]);
    });
  });
}
