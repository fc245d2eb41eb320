import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem } from "../src/host/runtime.ts";
import { type Instruction, loadInstructions, MAX_INSTRUCTION_BYTES, projectRoot, TRUNCATION_NOTICE } from "../src/config/instructions.ts";
import { runStartup } from "../src/admission/startup.ts";
import { sha256Hex } from "../src/util/digest.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const diskFs: FileSystem = isDeno ? (await import(denoAdapter) as { denoFileSystem: FileSystem }).denoFileSystem : nodeFileSystem;

const HOME = "/home/user/.magi-code";
const CWD = "/work/repo";
const paths = { home: HOME, cwd: CWD };
const live = () => new AbortController().signal;
/** A source and text view of what the loader used. */
type Loaded = { source: Instruction["source"]; text: string };

/** Loads the chain for `where` (no user home, no instructions.paths): which files, with their text. */
async function load(fs: FileSystem, where: { home: string; cwd: string }, signal: AbortSignal): Promise<Loaded[]> {
  const loaded = await loadInstructions(fs, { ...where, userHome: null, root: await projectRoot(fs, where.cwd, null), paths: [] }, signal);
  return loaded.files.map(({ source, text }) => ({ source, text }));
}

function memory(files: { global?: string | Uint8Array; workspace?: string | Uint8Array } = {}): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  void fs.mkdir(HOME, 0o700);
  void fs.mkdir(CWD, 0o755);
  if (files.global !== undefined) fs.writeFile(`${HOME}/AGENTS.md`, files.global);
  if (files.workspace !== undefined) fs.writeFile(`${CWD}/AGENTS.md`, files.workspace);
  return fs;
}

describe("loadInstructions()", () => {
  it("returns nothing without files, and global before workspace with both", async () => {
    assert.deepEqual(await load(memory(), paths, live()), []);
    assert.deepEqual(await load(memory({ global: "Use tabs." }), paths, live()), [{ source: "global", text: "Use tabs." }]);
    assert.deepEqual(await load(memory({ workspace: "Use spaces." }), paths, live()), [
      { source: "project", text: "Use spaces." },
    ]);
    assert.deepEqual(await load(memory({ global: "Use tabs.", workspace: "Use spaces." }), paths, live()), [
      { source: "global", text: "Use tabs." },
      { source: "project", text: "Use spaces." },
    ]);
  });

  it("reads the file once when the workspace is MC_HOME", async () => {
    const fs = memory({ global: "Once." });
    assert.deepEqual(await load(fs, { home: HOME, cwd: HOME }, live()), [{ source: "global", text: "Once." }]);
  });

  it("skips blank files, directories and unreadable files without failing", async () => {
    assert.deepEqual(await load(memory({ global: " \n\t", workspace: "" }), paths, live()), []);
    const fs = memory({ workspace: "Still read." });
    await fs.mkdir(`${HOME}/AGENTS.md`, 0o755);
    assert.deepEqual(await load(fs, paths, live()), [{ source: "project", text: "Still read." }]);
    const faulty = memory({ global: "Unreadable.", workspace: "Readable." });
    faulty.faults.set(`${HOME}/AGENTS.md`, "permission");
    assert.deepEqual(await load(faulty, paths, live()), [{ source: "project", text: "Readable." }]);
  });

  it("never opens a FIFO, directly or through a symlink", async () => {
    const fs = memory();
    fs.mkfifo(`${HOME}/AGENTS.md`);
    fs.mkfifo(`${CWD}/pipe`);
    fs.symlink(`${CWD}/pipe`, `${CWD}/AGENTS.md`);
    const opened: string[] = [];
    const watched = new Proxy(fs, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if (key === "openRead") return (path: string) => (opened.push(path), target.openRead(path));
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    assert.deepEqual(await load(watched, paths, live()), []);
    assert.deepEqual(opened, []);
  });

  it("follows symlinks: the global one anywhere, the workspace one only inside the workspace and outside MC_HOME", async () => {
    const fs = memory();
    fs.writeFile("/dotfiles/AGENTS.md", "Global via stow.");
    fs.symlink("/dotfiles/AGENTS.md", `${HOME}/AGENTS.md`);
    fs.writeFile(`${CWD}/docs/agents.md`, "Workspace via link.");
    fs.symlink("docs/agents.md", `${CWD}/AGENTS.md`);
    assert.deepEqual(await load(fs, paths, live()), [
      { source: "global", text: "Global via stow." },
      { source: "project", text: "Workspace via link." },
    ]);
    for (const target of ["/home/user/.ssh/id_ed25519", `${HOME}/credentials.json`, "/dotfiles/AGENTS.md"]) {
      const outside = memory();
      outside.writeFile(target, "secret");
      outside.symlink(target, `${CWD}/AGENTS.md`);
      assert.deepEqual(await load(outside, paths, live()), [], target);
    }
    // MC_HOME inside the workspace: a link into it stays refused.
    const nested = memory();
    nested.writeFile(`${CWD}/.store/credentials.json`, "secret");
    nested.symlink(".store/credentials.json", `${CWD}/AGENTS.md`);
    assert.deepEqual(await load(nested, { home: `${CWD}/.store`, cwd: CWD }, live()), []);
    // Compared as a case-insensitive filesystem would, where `.STORE` is MC_HOME too.
    const folded = memory();
    folded.writeFile(`${CWD}/.STORE/credentials.json`, "secret");
    folded.symlink(".STORE/credentials.json", `${CWD}/AGENTS.md`);
    assert.deepEqual(await load(folded, { home: `${CWD}/.store`, cwd: CWD }, live()), []);
  });

  it("keeps exactly 32 KiB of a file, and cuts a longer one at a character boundary with a notice", async () => {
    const exact = "a".repeat(MAX_INSTRUCTION_BYTES);
    assert.deepEqual(await load(memory({ global: exact }), paths, live()), [{ source: "global", text: exact }]);
    const longer = await load(memory({ global: `${exact}b` }), paths, live());
    assert.deepEqual(longer, [{ source: "global", text: exact + TRUNCATION_NOTICE }]);
    // "é" (2 bytes) and "😀" (4 bytes) straddling the bound are dropped whole, never half-decoded.
    for (const char of ["é", "😀"]) {
      const text = `${"a".repeat(MAX_INSTRUCTION_BYTES - 1)}${char}tail`;
      const [result] = await load(memory({ workspace: text }), paths, live());
      assert.equal(result?.text, "a".repeat(MAX_INSTRUCTION_BYTES - 1) + TRUNCATION_NOTICE);
    }
  });

  it("decodes invalid UTF-8 with replacement characters", async () => {
    const bytes = new Uint8Array([0x48, 0x69, 0xff, 0xc3, 0x21]);
    assert.deepEqual(await load(memory({ global: bytes }), paths, live()), [{ source: "global", text: "Hi\uFFFD\uFFFD!" }]);
  });

  it("reads nothing once cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(await load(memory({ global: "x", workspace: "y" }), paths, controller.signal), []);
  });

  it("works on disk, skipping a FIFO without blocking", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "magi-instructions-")));
    try {
      mkdirSync(join(dir, "home"));
      mkdirSync(join(dir, "repo"));
      writeFileSync(join(dir, "home", "AGENTS.md"), `${"x".repeat(MAX_INSTRUCTION_BYTES)}more`);
      assert.equal(spawnSync("mkfifo", [join(dir, "repo", "AGENTS.md")]).status, 0);
      const disk = { home: join(dir, "home"), cwd: join(dir, "repo") };
      assert.deepEqual(await load(diskFs, disk, live()), [
        { source: "global", text: "x".repeat(MAX_INSTRUCTION_BYTES) + TRUNCATION_NOTICE },
      ]);
      rmSync(join(dir, "repo", "AGENTS.md"));
      writeFileSync(join(dir, "outside.md"), "outside");
      symlinkSync(join(dir, "outside.md"), join(dir, "repo", "AGENTS.md"));
      assert.equal((await load(diskFs, disk, live())).length, 1);
      // A hard link's other name can be outside the workspace (~/.ssh/id_ed25519): it is skipped too.
      rmSync(join(dir, "repo", "AGENTS.md"));
      linkSync(join(dir, "outside.md"), join(dir, "repo", "AGENTS.md"));
      assert.deepEqual((await load(diskFs, disk, live())).map((item) => item.source), ["global"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("lands in the startup snapshot", async () => {
    const runtime = createMemoryRuntime({ cwd: CWD });
    runtime.fs.writeFile(`${HOME}/AGENTS.md`, "Global.");
    runtime.fs.writeFile(`${CWD}/AGENTS.md`, "Workspace.");
    const outcome = await runStartup(runtime, live());
    assert.ok(outcome.ok);
    const digest = async (text: string) => await sha256Hex(new TextEncoder().encode(text));
    assert.deepEqual(outcome.snapshot.instructions, [
      { source: "global", path: `${HOME}/AGENTS.md`, text: "Global.", sha256: await digest("Global."), bytes: 7 },
      { source: "project", path: `${CWD}/AGENTS.md`, text: "Workspace.", sha256: await digest("Workspace."), bytes: 10 },
    ]);
  });
});
