/**
 * What `npm pack` ships, tested the way a user gets it (tests/support/packed.ts:
 * a clean copy of this checkout packed and installed offline into a new
 * project). The installed bin then serves a turn against a loopback provider
 * on Node 20 and on Node 22 and 24 from the npm `node` package
 * (tests/support/node-versions.ts).
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { type NodeVersion, nodeVersions } from "./support/node-versions.ts";
import { headingAnchors, linkTargets } from "./support/markdown.ts";
import { must, packAndInstall } from "./support/packed.ts";
import { collect, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-package-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

let shipped: readonly string[] = [];
let app = "";
let versions: NodeVersion[] = [];

before(() => {
  ({ shipped, app } = packAndInstall(scratch));
  versions = nodeVersions();
});

describe("the packed tarball", () => {
  it("ships the runtime, types, schemas, linked docs, the example client and LICENSE, and no tests, bench or scripts", () => {
    const expected = [
      ...["dist/magi-code.cjs", "dist/magi-code.mjs", "dist/chunks/startup.cjs", "dist/mod.js", "dist/mod.d.ts", "dist/src/fuzz/mod.d.ts", "dist/src/client/mod.d.ts", "dist/runtime/node-client.d.ts"],
      ...["dist/cjs/client.js", "dist/cjs/package.json", "dist/cjs/runtime/node-client.d.ts"],
      ...["docs/client.md", "docs/fuzzing.md", "docs/security.md", "docs/schema/README.md", "docs/settings.schema.json"],
      ...["docs/schema/request.schema.json", "docs/schema/results/turn.start.schema.json", "docs/schema/events/run.finished.schema.json"],
      ...["LICENSE", "README.md", "package.json", "examples/agent.mjs"],
    ];
    for (const file of expected) {
      assert.ok(shipped.includes(file), `${file} is shipped`);
    }
    assert.ok(shipped.some((file) => file.startsWith("dist/chunks/")), "the bundle's chunks are shipped");
    const stray = shipped.filter((file) => /^(dist\/)?(tests|bench|scripts)\/|package-lock\.json$|\.test\./.test(file));
    assert.deepEqual(stray, []);
    const pkg = JSON.parse(readFileSync(join(app, "node_modules", "magi-code", "package.json"), "utf8"));
    assert.equal(pkg.license, "MIT");
    assert.match(readFileSync(join(app, "node_modules", "magi-code", "LICENSE"), "utf8"), /MIT License[\s\S]*the magi-code authors/);
  });

  it("every link of every shipped Markdown file resolves in the package, anchors included; links into the repository name its files", () => {
    const repository = "https://github.com/magi-code/magi-code/blob/main/";
    const tracked = new Set(must("git", ["ls-files", "--cached", "--others", "--exclude-standard"], root).split("\n"));
    const installed = join(app, "node_modules", "magi-code");
    const broken: string[] = [];
    const documents = shipped.filter((file) => file.endsWith(".md"));
    assert.ok(documents.includes("README.md") && documents.includes("docs/fuzzing.md"), documents.join(", "));
    for (const document of documents) {
      for (const target of linkTargets(readFileSync(join(installed, document), "utf8"))) {
        if (target.startsWith(repository)) {
          if (!tracked.has(target.slice(repository.length).split("#")[0]!)) broken.push(`${document}: ${target}`);
          continue;
        }
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // another site: nothing to resolve offline
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? document : posix.normalize(posix.join(posix.dirname(document), path));
        const isFile = shipped.includes(file);
        if (!isFile && !shipped.some((shippedFile) => shippedFile.startsWith(`${file.replace(/\/$/, "")}/`))) broken.push(`${document}: ${target}`);
        else if (anchor !== undefined && !(isFile && headingAnchors(readFileSync(join(installed, file), "utf8")).has(anchor))) broken.push(`${document}: ${target} (anchor)`);
      }
    }
    assert.deepEqual(broken, []);
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
      assert.deepEqual(out.bin, { "magi-code": "dist/magi-code.cjs" });
      // magi-code/client resolves the package's own bin, not one on PATH, and is mod.ts's client.
      assert.ok(out.binPath.endsWith(join("node_modules", "magi-code", "dist", "magi-code.cjs")) && out.binExists, out.binPath);
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
