/**
 * `spawnAgent()` when the child cannot be started or served: each failure
 * rejects what is pending with a `SpawnError` naming its cause (a missing
 * command, no permission, a missing or non-directory `cwd`, a child that
 * exits before `initialize` answers, with its stderr), and a child that dies
 * later says how it exited. Then the bundled case: a VS Code-shaped
 * extension that imports `magi-code/client`, bundled by esbuild as the
 * extension guide does (CommonJS, platform node), spawns the real agent
 * through the package shipped beside it, explains a missing bin when the
 * package is not shipped, and works there with an explicit command; with
 * magi-code marked external the bundle requires the shipped package's
 * CommonJS client. Last, a Deno program importing `magi-code/client` by
 * name gets the Node client and spawns the agent. Runs under Node and under
 * Deno (whose node:child_process serves the helper); the bundle is a Node
 * program, so Deno's run spawns `node` for it.
 */

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ConnectionClosed, ProtocolViolation, SpawnError, type SpawnFailure } from "../src/client/mod.ts";
import { binPath, spawnAgent } from "../runtime/node-client.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { collect, denoBinary, launchers, nodeBinary, repoRoot } from "./support/processes.ts";
import { workspace } from "./support/wire-client.ts";
import { spawn } from "node:child_process";

const root = mkdtempSync(join(tmpdir(), "magi-client-spawn-"));
let provider: FakeProvider | null = null;
after(async () => {
  await provider?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Asserts that `promise` rejects with a SpawnError of `reason` whose message names `named`. */
async function spawnFails(promise: Promise<unknown>, reason: SpawnFailure, named: string): Promise<SpawnError> {
  const error = await guarded(promise.then(() => null, (e: unknown) => e), "the spawn failure");
  assert.ok(error instanceof SpawnError, `a SpawnError, not ${String(error)}`);
  assert.ok(error instanceof ConnectionClosed, "a kind of ConnectionClosed");
  assert.equal(error.reason, reason, error.message);
  assert.ok(error.message.includes(named), `${JSON.stringify(error.message)} names ${named}`);
  return error;
}

describe("spawnAgent() failures name their cause", () => {
  it("a missing command is command_not_found (ENOENT), not a closed stdin", async () => {
    const command = join(root, "no-such-magi-code");
    const agent = spawnAgent({ command, args: [] });
    const error = await spawnFails(agent.initialize(["shutdown"]), "command_not_found", command);
    assert.equal(error.errno, "ENOENT");
    assert.equal(agent.failure, error);
    await spawnFails(agent.request("status", {}), "command_not_found", command);
    assert.equal(await agent.close(), null, "it never ran, so it has no exit code");
  });

  it("a command without execute permission is permission_denied (EACCES)", async () => {
    const command = join(root, "not-executable");
    writeFileSync(command, "#!/bin/sh\nexit 0\n", { mode: 0o644 });
    chmodSync(command, 0o644);
    const agent = spawnAgent({ command, args: [] });
    assert.equal((await spawnFails(agent.initialize(["shutdown"]), "permission_denied", command)).errno, "EACCES");
    assert.equal(await agent.shutdown(), null);
  });

  it("a missing working directory, or one that is a file, is cwd_invalid, and nothing is spawned", async () => {
    const missing = join(root, "no-such-dir");
    const file = join(root, "a-file");
    writeFileSync(file, "");
    for (const [cwd, problem] of [[missing, "does not exist"], [file, "is not a directory"]] as const) {
      const agent = spawnAgent({ cwd });
      assert.equal(agent.child, null);
      const error = await spawnFails(agent.initialize(["shutdown"]), "cwd_invalid", cwd);
      assert.ok(error.message.includes(problem), error.message);
      assert.equal(await agent.close(), null);
    }
  });

  for (const launcher of launchers().filter((l) => l.name !== "sea")) {
    it(`${launcher.name}: a child that exits before initialize answers is "exited", with its code and stderr's tail`, async () => {
      // A launch magi-code refuses: it says why on stderr and exits 2 before reading a request.
      const agent = spawnAgent({ command: launcher.command, args: [...launcher.prefix, "--frobnicate"], cwd: root });
      const error = await spawnFails(agent.initialize(["shutdown"]), "exited", "code 2");
      assert.equal(error.exitCode, 2);
      assert.match(error.stderr, /^magi-code: unknown command/m);
      assert.ok(error.message.includes(error.stderr), "the message carries the tail");
      assert.equal(await agent.close(), 2);
    });
  }

  it("a wrong command that prints to stdout and exits before initialize answers is \"exited\", with its code and stderr, not a protocol violation", async () => {
    const script = 'process.stderr.write("not-magi-code: unknown command serve\\n"); process.stdout.write("Usage: not-magi-code [options]\\n"); process.exitCode = 3;';
    const agent = spawnAgent({ command: nodeBinary(), args: ["-e", script], cwd: root });
    const error = await spawnFails(agent.initialize(["shutdown"]), "exited", "code 3");
    assert.equal(error.exitCode, 3);
    assert.match(error.stderr, /unknown command serve/);
    assert.match(error.message, /not a protocol frame/);
    assert.equal(await agent.close(), 3);
  });

  it("a wrong command that prints to stdout and keeps running is a ProtocolViolation carrying its stderr's tail", async () => {
    const script = 'process.stderr.write("a chatty server, listening\\n"); process.stdout.write("hello\\n"); process.stdin.resume();';
    const agent = spawnAgent({ command: nodeBinary(), args: ["-e", script], cwd: root });
    const error = await guarded(agent.initialize(["shutdown"]).then(() => null, (e: unknown) => e), "the violation");
    assert.ok(error instanceof ProtocolViolation, String(error));
    assert.equal(error.stderr, "a chatty server, listening");
    assert.ok(error.message.includes(error.stderr), error.message);
    // The client closed its stdin: it ends.
    assert.equal(await guarded(agent.close(), "its exit"), 0);
  });

  it("a child that dies after initialize: the connection closed, saying how it exited", async () => {
    provider ??= await startFakeProvider();
    const ws = workspace(root, "dies", provider);
    const launcher = launchers()[0]!;
    const agent = spawnAgent({ command: launcher.command, args: launcher.prefix, cwd: ws.cwd, env: ws.env });
    await guarded(agent.initialize(["shutdown"]), "initialize");
    // Killed first, so no answer can come: the request fails however the end reaches the client (EOF, EPIPE).
    agent.child!.kill("SIGKILL");
    const pending = agent.request("status", {});
    const error = await guarded(pending.then(() => null, (e: unknown) => e), "the pending status to fail");
    assert.ok(error instanceof ConnectionClosed && !(error instanceof SpawnError), String(error));
    assert.match(error.message, /it exited on a signal$/);
    assert.equal(await agent.close(), null);
  });
});

/** What the extension's `activate()` reports (see EXTENSION). */
interface Activation {
  readonly ok: boolean;
  readonly readiness?: string;
  readonly exit?: number | null;
  readonly reason?: string;
  readonly message?: string;
}

/** A VS Code-shaped extension entry: it spawns the agent on activation, optionally with an explicit command, and reports. */
const EXTENSION = `import { spawnAgent, SpawnError } from "magi-code/client";

export async function activate(): Promise<unknown> {
  const bin = process.env.EXT_AGENT_BIN;
  const agent = spawnAgent(bin ? { command: process.execPath, args: [bin] } : {});
  try {
    const init = await agent.initialize(["session.create", "shutdown"]);
    await agent.request("session.create", {});
    return { ok: true, readiness: init.status.readiness, exit: await agent.shutdown() };
  } catch (error) {
    await agent.close();
    return { ok: false, reason: error instanceof SpawnError ? error.reason : "other", message: String(error) };
  }
}
`;

/** The extension host's part: load the bundle as CommonJS, call activate(), print what it returned. */
const HOST = `require(process.argv[2]).activate().then((report) => process.stdout.write(JSON.stringify(report)));\n`;

describe("a bundled extension spawns the agent", () => {
  const project = join(root, "extension");
  const bundle = join(project, "out", "extension.js");

  /** Bundles the extension as the VS Code guide does (CommonJS), magi-code inlined or left external; returns the bundle. */
  function bundled(external = false): string {
    mkdirSync(join(project, "src"), { recursive: true });
    mkdirSync(join(project, "node_modules"), { recursive: true });
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "magi-extension", private: true, main: "./out/extension.js" }));
    writeFileSync(join(project, "src", "extension.ts"), EXTENSION);
    writeFileSync(join(project, "host.cjs"), HOST);
    // The installed package, as npm would place it (a link to this checkout, whose dist/ is built).
    try {
      symlinkSync(repoRoot(), join(project, "node_modules", "magi-code"), "dir");
    } catch {
      // Linked by an earlier test of this file.
    }
    const esbuild = join(repoRoot(), "node_modules", ".bin", "esbuild");
    const outfile = external ? "out/external.js" : "out/extension.js";
    const args = ["src/extension.ts", "--bundle", `--outfile=${outfile}`, "--format=cjs", "--platform=node", "--external:vscode", "--log-level=error"];
    const built = spawnSync(esbuild, external ? [...args, "--external:magi-code"] : args, { cwd: project, encoding: "utf8" });
    assert.equal(built.status, 0, built.stderr);
    return join(project, outfile);
  }

  /** Runs `host.cjs` on `file` in a workspace and returns the extension's report. */
  async function activate(file: string, name: string, env: Record<string, string> = {}): Promise<Activation> {
    provider ??= await startFakeProvider();
    const ws = workspace(root, name, provider);
    const host = spawn(nodeBinary(), [join(project, "host.cjs"), file], { cwd: ws.cwd, env: { ...ws.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const [stdout, stderr] = await guarded(Promise.all([collect(host.stdout), collect(host.stderr)]), "the extension host");
    assert.ok(stdout !== "", `the host printed nothing; stderr:\n${stderr}`);
    return JSON.parse(stdout) as Activation;
  }

  it("with the package shipped beside the bundle, spawnAgent() finds the bin through package resolution", async () => {
    const report = await activate(bundled(), "ext-shipped");
    assert.deepEqual(report, { ok: true, readiness: "ready", exit: 0 });
  });

  it("with magi-code marked external, the bundle requires the shipped package's CommonJS client, which spawns its own bin", async () => {
    const file = bundled(true);
    assert.ok(readFileSync(file, "utf8").includes('require("magi-code/client")'), "the library stayed external");
    const report = await activate(file, "ext-external");
    assert.deepEqual(report, { ok: true, readiness: "ready", exit: 0 });
  });

  it("without the package, spawnAgent() fails with bin_missing saying what to do; an explicit command works", async () => {
    bundled();
    const bare = join(root, "bare-extension");
    mkdirSync(bare, { recursive: true });
    copyFileSync(bundle, join(bare, "extension.js"));
    const missing = await activate(join(bare, "extension.js"), "ext-bare");
    assert.equal(missing.ok, false);
    assert.equal(missing.reason, "bin_missing", missing.message);
    assert.match(missing.message!, /mark "magi-code" external/);
    assert.match(missing.message!, /\{ command, args \}/);
    const explicit = await activate(join(bare, "extension.js"), "ext-explicit", { EXT_AGENT_BIN: binPath });
    assert.deepEqual(explicit, { ok: true, readiness: "ready", exit: 0 });
  });
});

/**
 * A Deno program that imports the package by name, as a Deno project with it
 * in node_modules does, and spawns the agent twice: by default, and with the
 * permissions docs/client.md ("On Deno") names.
 */
const DENO_MAIN = `import { binPath, spawnAgent } from "magi-code/client";

const narrow = ["run", "--allow-read", "--allow-write", "--allow-env", "--allow-net", "--allow-run", "--allow-sys=hostname", binPath];
const reports = [];
for (const options of [{}, { command: Deno.execPath(), args: narrow }]) {
  const agent = spawnAgent({ cwd: Deno.args[0], ...options });
  const init = await agent.initialize(["shutdown"]);
  reports.push({ readiness: init.status.readiness, exit: await agent.shutdown() });
}
console.log(JSON.stringify({ resolved: import.meta.resolve("magi-code/client"), reports }));
`;

describe("magi-code/client on Deno", () => {
  it("is the Node client (Deno applies the node condition): spawnAgent() spawns the agent, by default and with named permissions", async () => {
    const project = join(root, "deno-project");
    mkdirSync(join(project, "node_modules"), { recursive: true });
    symlinkSync(repoRoot(), join(project, "node_modules", "magi-code"), "dir");
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "deno-app", private: true, type: "module" }));
    writeFileSync(join(project, "main.ts"), DENO_MAIN);
    provider ??= await startFakeProvider();
    const ws = workspace(root, "deno-client", provider);
    const deno = spawn(denoBinary(), ["run", "--allow-all", "main.ts", ws.cwd], { cwd: project, env: ws.env, stdio: ["ignore", "pipe", "pipe"] });
    const [stdout, stderr] = await guarded(Promise.all([collect(deno.stdout), collect(deno.stderr)]), "the Deno program");
    assert.ok(stdout !== "", `it printed nothing; stderr:\n${stderr}`);
    const report = JSON.parse(stdout) as { resolved: string; reports: unknown[] };
    assert.match(report.resolved, /\/dist\/runtime\/node-client\.js$/);
    assert.deepEqual(report.reports, [{ readiness: "ready", exit: 0 }, { readiness: "ready", exit: 0 }]);
  });
});
