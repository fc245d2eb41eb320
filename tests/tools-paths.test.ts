import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { isRuntimeError } from "../src/host/runtime.ts";
import { isProtectedWrite, isWithin, type PathAccess, type PathDecision, resolveWorkspacePath } from "../src/policy/workspace-paths.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { removeWorlds, type World, worldMakers } from "./support/tools.ts";

after(removeWorlds);

const decide = (world: World, input: string, access: PathAccess, home = world.home): Promise<PathDecision> =>
  resolveWorkspacePath({ fs: world.fs, workspace: world.workspace, home }, input, access);

async function admitted(world: World, input: string, access: PathAccess): Promise<string> {
  const decision = await decide(world, input, access);
  assert.ok(decision.ok, `${input} (${access}) should be admitted, got ${JSON.stringify(decision)}`);
  return decision.path;
}

async function refused(world: World, input: string, access: PathAccess, reason: string, home?: string): Promise<void> {
  assert.deepEqual(await decide(world, input, access, home), { ok: false, reason }, `${input} (${access})`);
}

/**
 * The safety oracle, independent of realpath: an admitted path is absolute,
 * normalised and inside the workspace, no existing component of it is a
 * symlink (so the kernel resolves it to itself), and once a component is
 * missing nothing below it exists.
 */
async function assertSafe(world: World, path: string): Promise<void> {
  assert.ok(isWithin(world.workspace, path), `${path} is inside the workspace`);
  assert.ok(path.startsWith("/") && !/\/\.{0,2}(\/|$)/.test(path.slice(1)) && !path.includes("//"), `${path} is normalised`);
  const parts = path.split("/").filter((part) => part !== "");
  let prefix = "";
  for (const part of parts) {
    prefix += `/${part}`;
    try {
      const info = await world.fs.lstat(prefix);
      assert.notEqual(info.kind, "symlink", `${prefix} is no symlink`);
    } catch (error) {
      assert.ok(isRuntimeError(error, "not_found"), `${prefix}: ${String(error)}`);
      return;
    }
  }
}

for (const [name, make] of worldMakers()) {
  describe(`workspace path policy: ${name}`, () => {
    it("admits workspace-relative and absolute-inside paths as their canonical form", async () => {
      const world = make();
      world.file("ws/src/a.ts", "a");
      assert.equal(await admitted(world, "src/a.ts", "read"), `${world.workspace}/src/a.ts`);
      assert.equal(await admitted(world, "./src//a.ts", "read"), `${world.workspace}/src/a.ts`);
      assert.equal(await admitted(world, `${world.workspace}/src/a.ts`, "write"), `${world.workspace}/src/a.ts`);
      assert.equal(await admitted(world, "src/new/deeper/file.ts", "write"), `${world.workspace}/src/new/deeper/file.ts`);
      assert.equal(await admitted(world, ".", "read"), world.workspace);
      assert.equal(await admitted(world, "src/../src/a.ts", "read"), `${world.workspace}/src/a.ts`);
    });

    it("refuses .. and absolute paths that leave the workspace", async () => {
      const world = make();
      world.file("outside/secret.txt", "s");
      await refused(world, "../outside/secret.txt", "read", "outside_workspace");
      await refused(world, "src/../../outside/secret.txt", "read", "outside_workspace");
      await refused(world, `${world.root}/outside/secret.txt`, "read", "outside_workspace");
      await refused(world, "/", "read", "outside_workspace");
      await refused(world, "..", "write", "outside_workspace");
      // A sibling whose name merely starts with the workspace's is outside too.
      world.dir("ws2");
      await refused(world, `${world.workspace}2/x`, "write", "outside_workspace");
    });

    it("follows symlinks to their canonical target: inside is fine, outside is refused for reads and writes", async () => {
      const world = make();
      world.file("ws/real/inside.txt", "i");
      world.file("outside/secret.txt", "s");
      world.link("real/inside.txt", "ws/alias.txt");
      world.link("../outside", "ws/escape");
      world.link(`${world.root}/outside/secret.txt`, "ws/abs-escape.txt");
      assert.equal(await admitted(world, "alias.txt", "write"), `${world.workspace}/real/inside.txt`);
      await refused(world, "escape/secret.txt", "read", "outside_workspace");
      await refused(world, "escape/new.txt", "write", "outside_workspace");
      await refused(world, "escape/new/dir/file.txt", "write", "outside_workspace");
      await refused(world, "abs-escape.txt", "read", "outside_workspace");
      await refused(world, "escape", "read", "outside_workspace");
    });

    it("resolves .. lexically before symlinks, so the kernel never sees link/..", async () => {
      const world = make();
      world.dir("outside/deep");
      world.link("../outside/deep", "ws/link");
      // Lexically `link/../x` is `x` in the workspace; the kernel would have said outside/x.
      assert.equal(await admitted(world, "link/../x.txt", "write"), `${world.workspace}/x.txt`);
    });

    it("refuses dangling symlinks, loops, files used as directories and malformed input as invalid", async () => {
      const world = make();
      world.file("ws/file.txt", "f");
      world.link("../outside/missing", "ws/dangling");
      world.link("loop-b", "ws/loop-a");
      world.link("loop-a", "ws/loop-b");
      await refused(world, "dangling", "write", "invalid");
      await refused(world, "dangling/child.txt", "write", "invalid");
      await refused(world, "loop-a", "read", "invalid");
      await refused(world, "file.txt/x", "write", "invalid");
      await refused(world, "", "read", "invalid");
      await refused(world, "a\0b", "read", "invalid");
      await refused(world, "x/".repeat(2100), "read", "invalid");
    });

    it("protects .git internals, the project's .magi-code and MC_HOME from writes; .gitignore is fine", async () => {
      const world = make();
      world.file("ws/.git/config", "[core]");
      world.file("ws/sub/.git/HEAD", "ref");
      world.file("ws/.magi-code/settings.jsonc", "{}");
      for (const path of [".git/config", ".git/hooks/pre-commit", ".git", "sub/.git/HEAD", ".GIT/config", "a/.Git/x", ".magi-code/settings.jsonc"]) {
        await refused(world, path, "write", "protected");
      }
      world.link(".git", "ws/g");
      await refused(world, "g/config", "write", "protected");
      assert.equal(await admitted(world, ".gitignore", "write"), `${world.workspace}/.gitignore`);
      assert.equal(await admitted(world, "sub/.gitmodules", "write"), `${world.workspace}/sub/.gitmodules`);
      assert.equal(await admitted(world, ".git/config", "read"), `${world.workspace}/.git/config`);
      assert.equal(await admitted(world, ".magi-code/settings.jsonc", "read"), `${world.workspace}/.magi-code/settings.jsonc`);
    });

    it("refuses reads and writes under MC_HOME when it lies inside the workspace", async () => {
      const world = make();
      world.file("ws/.magi-home/credentials.json", "{}");
      const home = `${world.workspace}/.magi-home`;
      await refused(world, ".magi-home/credentials.json", "read", "protected", home);
      await refused(world, ".magi-home/new", "write", "protected", home);
      await refused(world, ".magi-home", "read", "protected", home);
      assert.equal(isProtectedWrite({ workspace: world.workspace, home }, `${home}/x`), true);
    });

    it("never admits a path whose canonical form leaves the workspace (property)", async () => {
      const linkSites = ["ws/l1", "ws/a/l2", "ws/b/l3"] as const;
      const targets = ["../outside", "ABS_OUTSIDE", "a", "../a", "missing", "l1", "..", "../..", ".", "c", "../f.txt", "../../ws/a", "ABS_WS"];
      const segment = fc.constantFrom("a", "b", "c", "l1", "l2", "l3", "..", ".", "new", "f.txt", "outside", "ws");
      const links = fc.uniqueArray(fc.record({ at: fc.constantFrom(...linkSites), target: fc.constantFrom(...targets) }), {
        selector: (link) => link.at,
        maxLength: 3,
      });
      const input = fc.record({
        parts: fc.array(segment, { minLength: 1, maxLength: 6 }),
        anchor: fc.constantFrom("relative", "workspace", "root"),
        access: fc.constantFrom<PathAccess>("read", "write"),
      });
      let admittedCount = 0;
      await fc.assert(
        fc.asyncProperty(links, fc.array(input, { minLength: 1, maxLength: 8 }), async (placed, inputs) => {
          const world = make();
          world.dir("ws/a/c");
          world.dir("ws/b");
          world.file("ws/f.txt", "f");
          world.file("outside/secret.txt", "s");
          for (const link of placed) {
            const target = link.target === "ABS_OUTSIDE" ? `${world.root}/outside` : link.target === "ABS_WS" ? world.workspace : link.target;
            world.link(target, link.at);
          }
          for (const { parts, anchor, access } of inputs) {
            const relative = parts.join("/");
            const text = anchor === "relative" ? relative : `${anchor === "workspace" ? world.workspace : world.root}/${relative}`;
            const decision = await decide(world, text, access);
            if (!decision.ok) continue;
            admittedCount++;
            await assertSafe(world, decision.path);
          }
        }),
        { numRuns: fuzzRuns(60, 5) },
      );
      assert.ok(admittedCount > 0, "the generated paths admit some, so the property is not vacuous");
    });
  });
}
