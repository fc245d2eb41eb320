/**
 * The Deno entry under the narrow permission set the README's spawn line
 * gives (`SERVE_FLAGS`), not `--allow-all`: it serves a whole turn with a
 * shell tool call over a socketpair (what Node and Electron parents create),
 * serves a shell pipeline and named FIFOs, still refuses a file on stdin, and
 * names the flag when one of the five required permissions is missing.
 */

import assert from "node:assert/strict";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REQUIRED_PERMISSIONS, SERVE_FLAGS } from "../runtime/permissions.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { collect, denoBinary, type Launcher, repoRoot, spawnDirect, spawnFifo, spawnPipeline } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { guarded, WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-deno-perms-"));
after(() => rmSync(root, { recursive: true, force: true }));
const entry = join(repoRoot(), "runtime", "deno.ts");

function denoWith(flags: readonly string[]): Launcher {
  return { name: "deno", command: denoBinary(), prefix: ["run", ...flags, "--quiet", entry] };
}

const INIT = `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id: "i", method: "initialize", params: { required_capabilities: [] } })}\n`;
const SHUTDOWN = `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id: "s", method: "shutdown", params: {} })}\n`;

describe("the Deno entry with the narrow permission set", () => {
  it("the documented set is the five required permissions plus --allow-sys=hostname", () => {
    assert.deepEqual([...SERVE_FLAGS], ["--allow-read", "--allow-write", "--allow-env", "--allow-net", "--allow-run", "--allow-sys=hostname"]);
  });

  it("runs a turn with an approved shell command over a socketpair", async () => {
    const provider = await startFakeProvider();
    const ws = workspace(root, "turn", provider);
    const client = new WireClient(denoWith(SERVE_FLAGS), ws.cwd, ws.env);
    try {
      await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
      const session = (await client.ok("session.create")).session_id as string;
      provider.enqueue(reply("openai-chat", { calls: [{ id: "c1", name: "shell", args: { command: "echo narrow > made.txt" } }] }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const run = (await client.ok("turn.start", { session_id: session, prompt: "make a file" })).run_id as string;
      const approval = (await client.event(run, "approval.requested")).data!;
      await client.ok("approval.answer", { session_id: session, run_id: run, approval_id: approval.approval_id, allow: true });
      const events = await client.runEvents(run);
      const finished = events.at(-1)!.data!;
      assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["completed", "durable", null]);
      const states = events.filter((frame) => frame.event === "activity").map((frame) => frame.data!.state);
      assert.deepEqual(states, ["started", "completed"]);
      assert.equal(readFileSync(join(ws.cwd, "made.txt"), "utf8"), "narrow\n");
      const { code } = await client.shutdown();
      assert.equal(code, 0);
      assert.equal(await client.stderr, "");
    } finally {
      client.abandon();
      await provider.close();
    }
  });

  for (const [name, spawnIt] of [["a shell pipeline", spawnPipeline], ["named FIFOs", spawnFifo]] as const) {
    it(`serves ${name}`, async () => {
      const home = mkdtempSync(join(root, "home-"));
      const child = spawnIt(denoWith(SERVE_FLAGS), ["serve", "--stdio"], { env: { ...process.env, MC_HOME: home } });
      const stdout = collect(child.stdout);
      child.stdin.write(INIT + SHUTDOWN);
      child.stdin.end();
      assert.equal(await guarded(child.exited, "exit"), 0);
      const ids = (await stdout).trim().split("\n").map((line) => JSON.parse(line).id);
      assert.deepEqual(ids.sort(), ["i", "s"]);
    });
  }

  it("still refuses a regular file on stdin", async () => {
    const file = join(root, "input.jsonl");
    writeFileSync(file, INIT);
    const fd = openSync(file, "r");
    const child = spawnDirect(denoWith(SERVE_FLAGS), ["serve", "--stdio"], { stdio: [fd, "pipe", "pipe"] });
    const [stderr, code] = await Promise.all([collect(child.stderr), guarded(child.exited, "exit")]);
    assert.equal(code, 2);
    assert.match(stderr, /must be pipes/);
  });

  for (const missing of REQUIRED_PERMISSIONS) {
    it(`without --allow-${missing}, exits 2 naming it`, async () => {
      const flags = SERVE_FLAGS.filter((flag) => flag !== `--allow-${missing}`);
      const child = spawnDirect(denoWith(flags), ["serve", "--stdio"]);
      const [stdout, stderr, code] = await Promise.all([collect(child.stdout), collect(child.stderr), guarded(child.exited, "exit")]);
      assert.equal(code, 2);
      assert.equal(stdout, "");
      assert.equal(stderr, `magi-code: the Deno permission --allow-${missing} is missing; run the Deno entry with ${SERVE_FLAGS.join(" ")}\n`);
    });
  }

  it("--allow-all --deny-run names --allow-run, and --help needs no permission", async () => {
    const denied = spawnDirect(denoWith(["--allow-all", "--deny-run"]), ["serve", "--stdio"]);
    const [stderr, code] = await Promise.all([collect(denied.stderr), guarded(denied.exited, "exit")]);
    assert.equal(code, 2);
    assert.match(stderr, /--allow-run is missing/);
    const help = spawnDirect(denoWith([]), ["--help"]);
    const [text, helpCode] = await Promise.all([collect(help.stdout), guarded(help.exited, "exit")]);
    assert.equal(helpCode, 0);
    assert.match(text, /serve --stdio/);
  });
});
