/**
 * The instructions chain on a real disk, through the runtime's own
 * filesystem adapter (Node's under Node, Deno's under Deno): a nested git
 * repository read from the project root down to the cwd, the nearer text
 * later, the per-file and total bounds serving the nearest text first,
 * symlinks, hard links and FIFOs refused per the workspace file's rules, a
 * `.git` file (a worktree), the home-directory ceiling and a cwd outside
 * any repository (docs/features/runner.md, "Instructions"). The walk's cost
 * is counted in calls on the in-memory filesystem, never timed.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import { instructionHeading, INSTRUCTIONS_ORDER, instructionsSection, SECTION_SEPARATOR } from "../src/config/instructions-section.ts";
import {
  GLOBAL_INSTRUCTIONS_SHARE,
  type Instruction,
  type InstructionsLoad,
  loadInstructions,
  MAX_INSTRUCTION_BYTES,
  MAX_INSTRUCTIONS_TOTAL_BYTES,
  MAX_PROJECT_DEPTH,
  omissionNotice,
  projectRoot,
  TRUNCATION_NOTICE,
} from "../src/config/instructions.ts";
import { deno, scratch } from "./support/fs-adapters.ts";

const disk: FileSystem = deno?.denoFileSystem ?? nodeFileSystem;
const live = () => new AbortController().signal;
let cases = 0;

/** A fresh directory tree: `files` maps relative paths to contents; returns the canonical base. */
function tree(files: Readonly<Record<string, string>> = {}, directories: readonly string[] = []): string {
  const base = realpathSync(scratch);
  const root = join(base, `chain-${cases++}`);
  for (const directory of directories) mkdirSync(join(root, directory), { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  mkdirSync(root, { recursive: true });
  return root;
}

/** Loads the chain of `<base>/<cwd>` with `MC_HOME` at `<base>/mc`, its root found under `userHome`, and no instructions.paths. */
async function chain(base: string, cwd: string, userHome: string | null = base): Promise<InstructionsLoad> {
  const where = { home: join(base, "mc"), cwd: join(base, cwd) };
  return await loadInstructions(disk, { ...where, userHome, root: await projectRoot(disk, where.cwd, userHome), paths: [] }, live());
}

/** The texts used, in order. */
const texts = (loaded: InstructionsLoad) => loaded.files.map((file) => file.text);

describe("the instructions chain on disk", () => {
  it("reads MC_HOME's, then the repository root's down to the cwd's, one per directory, nearer later", async () => {
    const base = tree({
      "mc/AGENTS.md": "global",
      "repo/AGENTS.md": "root",
      "repo/packages/AGENTS.md": "packages",
      "repo/packages/app/AGENTS.md": "app",
      // Not on the chain: below the cwd, beside it, above the root, and another name.
      "repo/packages/app/src/AGENTS.md": "below",
      "repo/packages/lib/AGENTS.md": "beside",
      "AGENTS.md": "above",
      "repo/packages/app/AGENTS.override.md": "override",
      "repo/packages/app/CLAUDE.md": "claude",
    }, ["repo/.git"]);
    const loaded = await chain(base, "repo/packages/app");
    assert.equal(await projectRoot(disk, join(base, "repo/packages/app"), base), join(base, "repo"));
    assert.deepEqual(texts(loaded), ["global", "root", "packages", "app"]);
    assert.deepEqual(loaded.files.map((file) => [file.source, file.path]), [
      ["global", join(base, "mc/AGENTS.md")],
      ["project", join(base, "repo/AGENTS.md")],
      ["project", join(base, "repo/packages/AGENTS.md")],
      ["project", join(base, "repo/packages/app/AGENTS.md")],
    ]);
    assert.deepEqual(loaded.skipped, []);
    // A directory of the chain without AGENTS.md is simply passed over.
    assert.deepEqual(texts(await chain(base, "repo/packages/app/src")), ["global", "root", "packages", "app", "below"]);
  });

  it("finds the root at a .git file (a worktree or submodule) and at the nearest .git of nested repositories", async () => {
    const base = tree({
      "outer/AGENTS.md": "outer",
      "outer/wt/.git": "gitdir: /elsewhere/.git/worktrees/wt\n",
      "outer/wt/AGENTS.md": "worktree",
      "outer/wt/sub/AGENTS.md": "sub",
    }, ["outer/.git"]);
    assert.deepEqual(texts(await chain(base, "outer/wt/sub")), ["worktree", "sub"]);
    assert.equal(await projectRoot(disk, join(base, "outer/wt/sub"), base), join(base, "outer/wt"));
  });

  it("takes the cwd alone outside any repository, and never looks above the user's home", async () => {
    const base = tree({ "home/AGENTS.md": "home", "home/work/AGENTS.md": "work", "home/work/app/AGENTS.md": "app", "AGENTS.md": "above home" }, [".git"]);
    const home = join(base, "home");
    // The only .git is above the home directory: the cwd inside it is a project of its own.
    assert.deepEqual(texts(await chain(base, "home/work/app", home)), ["app"]);
    // Without a known home the walk goes on and finds it.
    assert.deepEqual(texts(await chain(base, "home/work/app", null)), ["above home", "home", "work", "app"]);
    // The home directory itself may be the root (a dotfiles repository).
    mkdirSync(join(home, ".git"));
    assert.deepEqual(texts(await chain(base, "home/work/app", home)), ["home", "work", "app"]);
    // A cwd outside the home is walked up to the filesystem root.
    const outside = tree({ "x/AGENTS.md": "x", "x/y/AGENTS.md": "y" }, [".git"]);
    assert.deepEqual(texts(await chain(outside, "x/y", home)), ["x", "y"]);
  });

  it("follows a symlink only to a file inside the project root and outside MC_HOME, and skips hard links and FIFOs", async () => {
    const base = tree({
      "repo/AGENTS.md": "root",
      "repo/docs/pkg.md": "pkg via link",
      "repo/mc/credentials.json": "secret",
      "outside.md": "outside",
    }, ["repo/.git", "repo/pkg/app", "repo/fifo"]);
    symlinkSync("../docs/pkg.md", join(base, "repo/pkg/AGENTS.md"));
    assert.equal(spawnSync("mkfifo", [join(base, "repo/pkg/app/AGENTS.md")]).status, 0);
    const home = join(base, "repo/mc");
    const load = () => loadInstructions(disk, { home, userHome: base, cwd: join(base, "repo/pkg/app"), root: join(base, "repo"), paths: [] }, live());
    const first = await load();
    assert.deepEqual(texts(first), ["root", "pkg via link"]);
    assert.deepEqual(first.skipped.map((skipped) => [skipped.path, skipped.reason]), [[join(base, "repo/pkg/app/AGENTS.md"), "not_regular"]]);

    // Out of the project root, into MC_HOME (inside the repository), or a hard link: each skipped.
    for (const [make, reason] of [
      [(path: string) => symlinkSync(join(base, "outside.md"), path), "outside"],
      [(path: string) => symlinkSync(join(home, "credentials.json"), path), "outside"],
      [(path: string) => linkSync(join(base, "outside.md"), path), "hard_link"],
    ] as const) {
      const path = join(base, "repo/pkg/AGENTS.md");
      rmSync(path, { force: true });
      make(path);
      const loaded = await load();
      assert.deepEqual(texts(loaded), ["root"]);
      assert.deepEqual(loaded.skipped.map((skipped) => skipped.reason), [reason, "not_regular"]);
    }
  });

  it("refuses a chain file linked to ~/.ssh when the project root is the user's home or above it", async () => {
    const base = tree({
      "home/.ssh/id_ed25519": "PRIVATE KEY",
      "home/AGENTS.md": "dotfiles",
      "home/dl/pkg/notes.md": "notes",
    }, ["home/.git"]);
    const home = join(base, "home");
    const cwd = join(home, "dl/pkg");
    // A downloaded tree without a .git of its own, below a dotfiles repository at ~: the root is ~.
    symlinkSync("../../.ssh/id_ed25519", join(cwd, "AGENTS.md"));
    symlinkSync("../.ssh/id_ed25519", join(home, "dl/AGENTS.md"));
    const loaded = await chain(base, "home/dl/pkg", home);
    assert.deepEqual(texts(loaded), ["dotfiles"]);
    assert.deepEqual(loaded.skipped.map((skipped) => [skipped.path, skipped.reason]), [
      [join(home, "dl/AGENTS.md"), "outside"],
      [join(cwd, "AGENTS.md"), "outside"],
    ]);
    // A link that stays in the directory holding it is still followed.
    rmSync(join(cwd, "AGENTS.md"));
    symlinkSync("notes.md", join(cwd, "AGENTS.md"));
    assert.deepEqual(texts(await chain(base, "home/dl/pkg", home)), ["dotfiles", "notes"]);

    // A root above the home (a .git at its parent): neither its AGENTS.md nor a project path may reach into the home.
    mkdirSync(join(base, ".git"));
    symlinkSync("home/.ssh/id_ed25519", join(base, "AGENTS.md"));
    const paths = [{ scope: "project", path: join(base, "home/.ssh/id_ed25519") }] as const;
    const above = await loadInstructions(disk, { home: join(base, "mc"), userHome: home, cwd: base, root: base, paths }, live());
    assert.deepEqual(texts(above), []);
    assert.deepEqual(above.skipped.map((skipped) => skipped.reason), ["outside", "outside"]);
  });

  it("uses a file reached twice once, where first met", async () => {
    const base = tree({ "repo/AGENTS.md": "shared" }, ["repo/.git", "repo/app"]);
    symlinkSync("../AGENTS.md", join(base, "repo/app/AGENTS.md"));
    const loaded = await chain(base, "repo/app");
    assert.deepEqual(loaded.files.map((file) => file.path), [join(base, "repo/AGENTS.md")]);
  });

  it("bounds each file and the whole section, headings and notices included, serving the nearest text first", async () => {
    const big = "r".repeat(MAX_INSTRUCTION_BYTES + 10);
    const base = tree({
      "mc/AGENTS.md": "g".repeat(100),
      "repo/AGENTS.md": big,
      "repo/pkg/AGENTS.md": "p".repeat(MAX_INSTRUCTION_BYTES),
      "repo/pkg/app/AGENTS.md": "a".repeat(10),
    }, ["repo/.git"]);
    const loaded = await chain(base, "repo/pkg/app");
    const size = (text: string) => new TextEncoder().encode(text).length;
    const overhead = (file: Instruction) => 2 * size(SECTION_SEPARATOR) + size(instructionHeading(file.source, file.path));
    const [, root, pkg, app] = loaded.files;
    // The project's files share all but the global share; the root's file takes what the nearer two leave.
    const rootShare = MAX_INSTRUCTIONS_TOTAL_BYTES - GLOBAL_INSTRUCTIONS_SHARE - size(INSTRUCTIONS_ORDER) -
      overhead(app!) - 10 - overhead(pkg!) - MAX_INSTRUCTION_BYTES - overhead(root!) - size(TRUNCATION_NOTICE);
    assert.deepEqual(loaded.files.map((file) => file.bytes), [100, rootShare, MAX_INSTRUCTION_BYTES, 10]);
    assert.deepEqual(texts(loaded), ["g".repeat(100), "r".repeat(rootShare) + TRUNCATION_NOTICE, "p".repeat(MAX_INSTRUCTION_BYTES), "a".repeat(10)]);
    assert.ok(size(instructionsSection(loaded.files)!) <= MAX_INSTRUCTIONS_TOTAL_BYTES);
  });

  it("keeps the user's global file whole however much the repository writes", async () => {
    const global = "g".repeat(GLOBAL_INSTRUCTIONS_SHARE - 1024);
    const files: Record<string, string> = { "mc/AGENTS.md": global };
    for (const directory of ["repo", "repo/a", "repo/a/b", "repo/a/b/c"]) files[`${directory}/AGENTS.md`] = "p".repeat(MAX_INSTRUCTION_BYTES);
    const base = tree(files, ["repo/.git"]);
    const loaded = await chain(base, "repo/a/b/c");
    assert.equal(loaded.files[0]!.source, "global");
    assert.equal(loaded.files[0]!.text.endsWith(global), true);
    assert.equal(loaded.files[0]!.bytes, global.length);
    assert.ok(new TextEncoder().encode(instructionsSection(loaded.files)!).length <= MAX_INSTRUCTIONS_TOTAL_BYTES);
  });

  it("32 instructions.paths under long directory names stay within the total, the files without room left out with one notice", async () => {
    const base = tree({}, ["mc"]);
    const paths = Array.from({ length: 32 }, (_, index) => {
      const directory = join(base, ...Array.from({ length: 12 }, (_, level) => `${index}-${level}-`.padEnd(240, "d")));
      mkdirSync(directory, { recursive: true });
      writeFileSync(join(directory, "notes.md"), `${index}`.repeat(4096));
      return { scope: "global", path: join(directory, "notes.md") } as const;
    });
    const loaded = await loadInstructions(disk, { home: join(base, "mc"), userHome: null, cwd: base, root: base, paths }, live());
    const section = instructionsSection(loaded.files)!;
    assert.ok(new TextEncoder().encode(section).length <= MAX_INSTRUCTIONS_TOTAL_BYTES, `${new TextEncoder().encode(section).length} bytes`);
    const left = 32 - loaded.files.length;
    assert.ok(left > 0 && loaded.files.length > 0);
    // The nearest (last) files are kept; the notice opens the first kept one.
    assert.deepEqual(loaded.files.map((file) => file.path), paths.slice(left).map((entry) => entry.path));
    assert.ok(loaded.files[0]!.text.startsWith(omissionNotice(left)));
    assert.equal(section.split(omissionNotice(left)).length, 2);
  });
});

describe("the project root walk", () => {
  /** A memory filesystem whose lstat calls are counted by path. */
  function counted(): { fs: MemoryFileSystem; lstats: string[]; opened: string[] } {
    const fs = new MemoryFileSystem();
    const lstats: string[] = [];
    const opened: string[] = [];
    const [lstat, openRead] = [fs.lstat.bind(fs), fs.openRead.bind(fs)];
    fs.lstat = (path: string) => (lstats.push(path), lstat(path));
    fs.openRead = (path: string) => (opened.push(path), openRead(path));
    return { fs, lstats, opened };
  }

  it(`costs one lstat per directory examined, at most ${MAX_PROJECT_DEPTH}, then takes the cwd alone`, async () => {
    const { fs, lstats } = counted();
    const deep = `/${Array.from({ length: MAX_PROJECT_DEPTH + 20 }, (_, index) => `d${index}`).join("/")}`;
    await fs.mkdir(deep, 0o755);
    void fs.mkdir("/.git", 0o755);
    assert.equal(await projectRoot(fs, deep, null), deep);
    assert.equal(lstats.length, MAX_PROJECT_DEPTH);
    assert.ok(lstats.every((path) => path.endsWith("/.git")));
    // Within the bound the root is found, with one lstat per directory up to it.
    lstats.length = 0;
    const near = `/d0/d1/d2`;
    void fs.mkdir("/d0/.git", 0o755);
    assert.equal(await projectRoot(fs, near, null), "/d0");
    assert.deepEqual(lstats, ["/d0/d1/d2/.git", "/d0/d1/.git", "/d0/.git"]);
  });

  it("the whole chain costs two lstats per directory and one read per AGENTS.md found", async () => {
    const { fs, lstats, opened } = counted();
    void fs.mkdir("/r/.git", 0o755);
    fs.writeFile("/r/a/AGENTS.md", "a");
    await fs.mkdir("/r/a/b/c", 0o755);
    const cwd = "/r/a/b/c";
    const loaded = await loadInstructions(fs, { home: "/mc", userHome: null, cwd, root: await projectRoot(fs, cwd, null), paths: [] }, live());
    assert.deepEqual(texts(loaded), ["a"]);
    // 4 .git probes, the global file, 4 AGENTS.md probes.
    assert.equal(lstats.length, 9);
    assert.deepEqual(opened, ["/r/a/AGENTS.md"]);
  });
});
