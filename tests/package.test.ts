/**
 * What `npm pack` ships, tested the way a user gets it: the repository's
 * files (tracked and not ignored, as a fresh clone would have them plus
 * this checkout's uncommitted work) are copied to a temp directory, packed
 * there (so `prepack` must build; nothing from this checkout's dist/ can
 * leak in), and the tarball is installed offline (the tarball plus the npm
 * cache `npm ci` filled) into a new project. The installed bin then serves
 * a turn against a loopback provider on Node 20 and on Node 22 and 24 from
 * the npm `node` package (tests/support/node-versions.ts).
 *
 * Packing in the copy, not here, also keeps its tsc run from rewriting the
 * dist/ other test files are importing.
 */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { type NodeVersion, nodeVersions } from "./support/node-versions.ts";
import { collect, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-package-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `command` and fails with its output unless it exits 0. */
function must(command: string, args: readonly string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  assert.equal(result.status, 0, `${command} ${args.join(" ")} in ${cwd} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Copies what a clone of this checkout holds into `target`, node_modules linked rather than copied. */
function cleanCopy(target: string): void {
  const files = must("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], root).split("\0").filter((file) => file !== "");
  for (const file of files) {
    if (!existsSync(join(root, file))) continue; // deleted in the work tree, not yet committed
    mkdirSync(dirname(join(target, file)), { recursive: true });
    cpSync(join(root, file), join(target, file));
  }
  symlinkSync(join(root, "node_modules"), join(target, "node_modules"), "dir");
}

/**
 * A lockfile for an app that depends on the tarball: magi-code's runtime
 * dependencies (and theirs) are copied from this repository's lockfile, with
 * their registry URLs and integrity hashes, so `npm ci --offline` takes them
 * from the cache `npm ci` filled here. A plain `npm install <tarball>` would
 * need each dependency's registry metadata, which that cache does not hold.
 */
function appLockfile(tarballRef: string, integrity: string, pkg: Record<string, any>): unknown {
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")).packages as Record<string, Record<string, any>>;
  const packages: Record<string, unknown> = {
    "": { name: "app", dependencies: { "magi-code": tarballRef } },
    "node_modules/magi-code": {
      version: pkg.version,
      resolved: tarballRef,
      integrity,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
    },
  };
  const queue = Object.keys(pkg.dependencies ?? {});
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const key = `node_modules/${name}`;
    if (key in packages) continue;
    const entry = lock[key];
    assert.ok(entry !== undefined, `${name} is in package-lock.json`);
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...kept } = entry;
    packages[key] = kept;
    queue.push(...Object.keys(entry.dependencies ?? {}));
  }
  return { name: "app", lockfileVersion: 3, requires: true, packages };
}

let tarball = "";
let shipped: string[] = [];
let app = "";
let versions: NodeVersion[] = [];

before(() => {
  const clone = join(scratch, "clone");
  cleanCopy(clone);
  const packs = join(scratch, "packs");
  mkdirSync(packs);
  must("npm", ["pack", "--pack-destination", packs], clone);
  tarball = join(packs, readdirSync(packs).find((name) => name.endsWith(".tgz"))!);
  shipped = must("tar", ["-tzf", tarball], scratch).split("\n").filter((line) => line !== "" && !line.endsWith("/")).map((line) => line.replace(/^package\//, ""));
  app = join(scratch, "app");
  mkdirSync(app);
  const ref = `file:../packs/${tarball.slice(packs.length + 1)}`;
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  const pkg = JSON.parse(readFileSync(join(clone, "package.json"), "utf8"));
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "app", private: true, type: "module", dependencies: { "magi-code": ref } })}\n`);
  writeFileSync(join(app, "package-lock.json"), `${JSON.stringify(appLockfile(ref, integrity, pkg), null, 2)}\n`);
  must("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app);
  versions = nodeVersions();
});

describe("the packed tarball", () => {
  it("ships the runtime, types, schemas, linked docs, the example client and LICENSE, and no tests, bench or scripts", () => {
    for (const file of ["dist/magi-code.mjs", "dist/mod.js", "dist/mod.d.ts", "dist/src/fuzz/mod.d.ts", "dist/src/client/mod.d.ts", "dist/runtime/node-client.d.ts", "LICENSE", "README.md", "package.json", "docs/settings.schema.json", "docs/schema/request.schema.json", "docs/schema/results/turn.start.schema.json", "docs/schema/events/run.finished.schema.json", "examples/agent.mjs"]) {
      assert.ok(shipped.includes(file), `${file} is shipped`);
    }
    assert.ok(shipped.some((file) => file.startsWith("dist/chunks/")), "the bundle's chunks are shipped");
    const stray = shipped.filter((file) => /^(dist\/)?(tests|bench|scripts)\/|package-lock\.json$|\.test\./.test(file));
    assert.deepEqual(stray, []);
    const pkg = JSON.parse(readFileSync(join(app, "node_modules", "magi-code", "package.json"), "utf8"));
    assert.equal(pkg.license, "MIT");
    assert.match(readFileSync(join(app, "node_modules", "magi-code", "LICENSE"), "utf8"), /MIT License[\s\S]*the magi-code authors/);
  });

  it("ships every document the --help text names", () => {
    const help = must(versions[0]!.path, [join(app, "node_modules", ".bin", "magi-code"), "--help"], app);
    const docs = [...help.matchAll(/docs\/[\w./-]+\.(?:md|json)/g)].map((match) => match[0]);
    assert.ok(docs.length > 0, help);
    for (const doc of docs) assert.ok(shipped.includes(doc), `${doc}, named by --help, is shipped`);
  });

  it("is tested on the running Node (20 in CI) and on 22 and 24", () => {
    const majors = versions.map((version) => version.major);
    assert.ok(majors[0]! >= 20, `Node ${majors[0]}`);
    for (const major of [22, 24]) assert.ok(majors.includes(major), `Node ${major} is tested`);
  });

  it("exports its package.json and its entry points to every Node", () => {
    const probe = `import { createRequire } from "node:module";
const pkg = createRequire(process.cwd() + "/")("magi-code/package.json");
const mod = await import("magi-code");
const fuzz = await import("magi-code/fuzz").then(() => "loads", (error) => error.code);
const client = await import("magi-code/client");
const { existsSync } = await import("node:fs");
console.log(JSON.stringify({ version: pkg.version, VERSION: mod.VERSION, bin: pkg.bin, fuzz, binPath: client.binPath, binExists: existsSync(client.binPath),
  sameClient: client.AgentClient === mod.AgentClient, spawn: typeof client.spawnAgent }));`;
    for (const version of versions) {
      const out = JSON.parse(must(version.path, ["--input-type=module", "-e", probe], app));
      assert.equal(out.VERSION, out.version, `Node ${version.major}`);
      assert.deepEqual(out.bin, { "magi-code": "dist/magi-code.mjs" });
      // magi-code/client resolves the package's own bin, not one on PATH, and is mod.ts's client.
      assert.ok(out.binPath.endsWith(join("node_modules", "magi-code", "dist", "magi-code.mjs")) && out.binExists, out.binPath);
      assert.equal(out.sameClient, true);
      assert.equal(out.spawn, "function");
      // fast-check is an optional peer the app did not install: the kit says so instead of loading half.
      assert.equal(out.fuzz, "ERR_MODULE_NOT_FOUND", `Node ${version.major}`);
    }
  });

  it("the README's client snippet runs a turn through the installed magi-code/client on every Node", async () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const snippet = /<!-- client-snippet -->\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(snippet !== undefined, "README.md has the client snippet");
    assert.ok(snippet.split("\n").filter((line) => line.trim() !== "").length <= 22, "about 20 lines");
    writeFileSync(join(app, "snippet.mjs"), snippet);
    for (const version of versions) {
      const provider = await startFakeProvider();
      const ws = workspace(scratch, `snippet${version.major}`, provider);
      provider.enqueue(reply("openai-chat", {
        text: ["Let me ", "look."],
        calls: [{ id: "call_1", name: "write_file", args: { path: "seen.txt", content: "seen\n" } }],
      }));
      provider.enqueue(reply("openai-chat", { text: ["There is ", "seen.txt."] }));
      try {
        // Not spawnSync: the fake provider answers from this process's event loop.
        const child = spawn(version.path, ["snippet.mjs", "Which files are here?"], { cwd: app, env: ws.env, stdio: ["ignore", "pipe", "pipe"] });
        const status = new Promise<number | null>((resolve) => child.once("close", resolve));
        const [code, stdout, stderr] = await Promise.all([status, collect(child.stdout), collect(child.stderr)]);
        const result = { status: code, stdout, stderr };
        assert.equal(result.status, 0, `Node ${version.major}: ${result.stderr}`);
        assert.match(result.stderr, /^ready: ollama \/ qwen$/m);
        assert.match(result.stderr, /^allowing: /m);
        assert.match(result.stderr, /^\[write_file completed\] /m);
        assert.ok(result.stdout.endsWith("--- completed; reconciled answer:\nLet me look.\n\nThere is seen.txt.\n"), result.stdout);
        assert.equal(readFileSync(join(app, "seen.txt"), "utf8"), "seen\n");
        rmSync(join(app, "seen.txt"));
      } finally {
        await provider.close();
      }
    }
  });

  it("the installed bin serves a turn against a loopback provider on every Node", async () => {
    for (const version of versions) {
      const provider = await startFakeProvider();
      const ws = workspace(scratch, `node${version.major}`, provider);
      const client = new WireClient({ name: "node", command: version.path, prefix: [join(app, "node_modules", ".bin", "magi-code")] }, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: ["session.create", "turn.start", "shutdown"] });
        const session = (await client.ok("session.create")).session_id as string;
        provider.enqueue(reply("openai-chat", { text: ["Packed ", "and served."] }));
        const run = (await client.ok("turn.start", { session_id: session, prompt: `hello from Node ${version.major}` })).run_id as string;
        const events = await client.runEvents(run);
        const finished = events.at(-1)!.data!;
        assert.deepEqual([finished.outcome, finished.error_code], ["completed", null], `Node ${version.major}`);
        const text = events.filter((frame) => frame.event === "message.reconcile").map((frame) => frame.data!.text).join("");
        assert.equal(text, "Packed and served.");
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    }
  });
});
