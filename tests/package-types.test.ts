/**
 * The packed package from TypeScript projects set up the way editor
 * extensions are (docs/client.md): a CommonJS project shaped like one the VS
 * Code extension generator writes (no `"type"` in package.json, `module:
 * Node16`, `lib: ES2022`, `strict`, no `skipLibCheck`), the older generator's
 * `module: commonjs`, and an ES module project, each compiled against the
 * installed tarball with the oldest TypeScript the docs promise (5.1, from
 * tests/fixtures/typescript-5.1) and with the repository's own. The
 * compiled CommonJS extension then runs a turn under plain Node through
 * `require()`, with Node's `require()` of ES modules switched off where Node
 * has it, so only the package's CommonJS build can serve it.
 *
 * Under Deno this file drives the same Node and npm as children: what it
 * tests is the npm package, which only Node loads.
 */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { type NodeVersion, nodeVersions } from "./support/node-versions.ts";
import { must, type Packed, packAndInstall } from "./support/packed.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { workspace } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = mkdtempSync(join(tmpdir(), "magi-package-types-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The compilers: the oldest supported TypeScript and the repository's own (7). */
const COMPILERS = [
  { name: "TypeScript 5.1", tsc: join(root, "tests", "fixtures", "typescript-5.1", "node_modules", "typescript", "bin", "tsc") },
  { name: "TypeScript 7", tsc: join(root, "node_modules", "typescript", "bin", "tsc") },
] as const;

/** An extension's entry: what it uses of the client, typed by the package. */
const EXTENSION = `import { isProtocolError, spawnAgent, type SpawnedAgent } from "magi-code/client";

let agent: SpawnedAgent | undefined;

export async function activate(workspace: string): Promise<string> {
  agent = spawnAgent({ cwd: workspace });
  const { status } = await agent.initialize(["session.create", "session.open", "turn.start", "shutdown"]);
  const { session_id } = await agent.request("session.create", {});
  const run = await agent.startTurn(session_id, "hello", { onApproval: (approval) => approval.answer(false) });
  const finished = await run.finished;
  let missing = "opened";
  try {
    await agent.request("session.open", { session_id: "no-such-session" });
  } catch (error) {
    if (!isProtocolError(error)) throw error;
    missing = error.code;
  }
  return \`\${status.provider}/\${status.model} \${finished.outcome} \${JSON.stringify(run.text())} \${missing}\`;
}

export async function deactivate(): Promise<number | null | undefined> {
  return agent?.shutdown();
}
`;

/** What VS Code's extension host would do with the compiled extension, under plain Node. */
const HOST = `const extension = require("./out/extension.js");
const client = require.resolve("magi-code/client");
extension.activate(process.argv[2]).then(async (summary) => {
  const code = await extension.deactivate();
  console.log(JSON.stringify({ summary, code, client }));
});
`;

/** The tsconfig the current VS Code extension generator writes. */
const GENERATED = { module: "Node16", target: "ES2022", lib: ["ES2022"], types: ["node"], sourceMap: true, rootDir: "src", outDir: "out", strict: true };

let packed: Packed;
let versions: NodeVersion[] = [];

/** Writes a project at `<app>/<name>` with `tsconfig` options and the extension source; returns its directory. */
function project(name: string, pkg: Record<string, unknown>, options: Record<string, unknown>): string {
  const directory = join(packed.app, name);
  mkdirSync(join(directory, "src"), { recursive: true });
  writeFileSync(join(directory, "package.json"), `${JSON.stringify({ name, version: "0.0.1", private: true, ...pkg })}\n`);
  writeFileSync(join(directory, "tsconfig.json"), `${JSON.stringify({ compilerOptions: options })}\n`);
  writeFileSync(join(directory, "src", "extension.ts"), EXTENSION);
  return directory;
}

/** Compiles `directory` with `tsc`; fails with the compiler's diagnostics. */
function compile(tsc: string, directory: string, args: readonly string[] = []): void {
  must(nodeBinary(), [tsc, "-p", directory, ...args], directory);
}

before(() => {
  packed = packAndInstall(scratch, ["@types/node"]);
  versions = nodeVersions();
});

describe("the packed package from TypeScript", () => {
  it("the oldest compiler is TypeScript 5.1, as docs/client.md states", () => {
    const version = must(nodeBinary(), [COMPILERS[0].tsc, "--version"], scratch);
    assert.match(version, /^Version 5\.1\.\d+$/m);
  });

  it("TypeScript 7: a CommonJS project shaped like a generated VS Code extension (module Node16) type-checks", () => {
    compile(COMPILERS[1].tsc, project("generated-ts7", { main: "./out/extension.js" }, GENERATED), ["--noEmit"]);
  });

  for (const { name, tsc } of COMPILERS) {
    it(`${name}: an ES module project (module NodeNext) type-checks`, () => {
      compile(tsc, project(`esm-${name.replace(/\W/g, "")}`, { type: "module" }, { ...GENERATED, module: "NodeNext" }), ["--noEmit"]);
    });
  }

  it("TypeScript 5.1: the older generator's CommonJS project (module commonjs, node10 resolution) type-checks", () => {
    const directory = project("commonjs-ts51", {}, { ...GENERATED, module: "commonjs", target: "ES2020", lib: ["ES2020"] });
    compile(COMPILERS[0].tsc, directory, ["--noEmit"]);
  });

  it("TypeScript 7: module commonjs (bundler resolution there) type-checks with customConditions node, as docs/client.md says", () => {
    const directory = project("commonjs-ts7", {}, { ...GENERATED, module: "commonjs", customConditions: ["node"] });
    compile(COMPILERS[1].tsc, directory, ["--noEmit"]);
  });

  it("TypeScript 5.1 compiles a CommonJS project shaped like a generated VS Code extension (module Node16), which runs a turn through require() on every Node", async () => {
    const directory = project("extension", { main: "./out/extension.js" }, GENERATED);
    compile(COMPILERS[0].tsc, directory);
    writeFileSync(join(directory, "host.js"), HOST);
    for (const version of versions) {
      // Node 20.19 and 22.12 can require() an ES module; switched off, only a CommonJS build loads.
      const off = spawnSync(version.path, ["--no-experimental-require-module", "-e", ""]).status === 0 ? ["--no-experimental-require-module"] : [];
      const provider = await startFakeProvider();
      const ws = workspace(scratch, `extension${version.major}`, provider);
      provider.enqueue(reply("openai-chat", { text: ["Hello from ", "CommonJS."] }));
      try {
        const child = spawn(version.path, [...off, "host.js", ws.cwd], { cwd: directory, env: ws.env, stdio: ["ignore", "pipe", "pipe"] });
        const status = new Promise<number | null>((resolve) => child.once("close", resolve));
        const [code, stdout, stderr] = await Promise.all([status, collect(child.stdout), collect(child.stderr)]);
        assert.equal(code, 0, `Node ${version.major}: ${stderr}`);
        const out = JSON.parse(stdout) as { summary: string; code: number; client: string };
        assert.equal(out.summary, `ollama/qwen completed "Hello from CommonJS." session_missing`, `Node ${version.major}`);
        assert.equal(out.code, 0);
        assert.equal(out.client, realpathSync(join(packed.app, "node_modules", "magi-code", "dist", "cjs", "client.js")));
      } finally {
        await provider.close();
      }
    }
  });
});
