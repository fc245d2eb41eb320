/**
 * A nested Code Mode call waiting for the user's approval when its program
 * ends: the question is withdrawn at once (`approval.resolved` says
 * `superseded`, and so does its tool card), the call is not run, and the `code` call and the turn go
 * on without waiting for an answer or the expiry. The host is a scripted
 * stand-in (a real process speaking the frame protocol) that makes one call
 * and ends the program only once the approval was asked, which a real
 * guest cannot order deterministically; the clock is manual, so nothing
 * expires unless the test says so.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import { ManualClock } from "../runtime/memory.ts";
import type { Runtime, Subprocess } from "../src/host/runtime.ts";
import { line } from "./support/harness.ts";
import { nodeBinary } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { startTurnServer, stopTurnServer, type TurnServer, TURN_CAPABILITIES } from "./support/turns.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const real: Runtime = isDeno ? (await import(denoAdapter) as { createDenoRuntime(): Runtime }).createDenoRuntime() : createNodeRuntime();

const API = "openai-chat";
/** How long a wait may take before the test fails instead of hanging: a hang guard, not a speed claim. */
const HANG_GUARD_MS = 20_000;

const dir = mkdtempSync(join(tmpdir(), "magi-code-withdraw-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Polls (real time, one macrotask at a time) until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + HANG_GUARD_MS;
  while (!done()) {
    if (Date.now() > giveUp) assert.fail(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

const events = (server: TurnServer, name: string) => server.frames().filter((frame) => frame.event === name).map((frame) => frame.data as Record<string, unknown>);

describe("Code Mode approvals", () => {
  it("a nested call's approval still pending when the program ends is withdrawn as superseded, and the call never runs", async () => {
    const marker = join(dir, "asked");
    const hosts: Subprocess[] = [];
    // A host whose program calls write_file without awaiting it and returns once the child has asked about it.
    const host = [
      "const fs = require('fs');",
      "const frame = (m) => { const b = Buffer.from(JSON.stringify(m)); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); return Buffer.concat([h, b]); };",
      `process.stdout.write(frame({ type: 'call', id: 1, name: 'write_file', args: ${JSON.stringify(JSON.stringify({ path: "x.txt", content: "x" }))} }));`,
      "process.stdout.write(frame({ type: 'wait', results: 0 }));",
      `const poll = setInterval(() => { if (fs.existsSync(${JSON.stringify(marker)})) { clearInterval(poll); process.stdout.write(frame({ type: 'done', status: 'returned', text: 'left it waiting', logs: '' })); } }, 10);`,
      "setInterval(() => {}, 1000);",
    ].join("\n");
    const server = await startTurnServer(API, {
      clock: new ManualClock(),
      capabilities: [...TURN_CAPABILITIES, "approval.scope", "tool.cards"],
      settings: { code_mode: { enabled: true } },
      self: { command: nodeBinary(), args: ["-e", host] },
      // The host runs for real, in a real directory (the workspace exists only in memory).
      processes: {
        spawn: (command, options) => {
          const spawned = real.spawn(command, { ...options, cwd: dir });
          hosts.push(spawned);
          return spawned;
        },
        isProcessAlive: (pid) => real.isProcessAlive(pid),
      },
    });
    try {
      await scenario(server, marker);
    } finally {
      // The child kills its host itself; this only keeps a failing run from leaving the scripted one behind.
      for (const host of hosts) host.kill("SIGKILL");
    }
  });
});

/** Drives the turn: the approval, the program's end, and what the client and the model then see. */
async function scenario(server: TurnServer, marker: string): Promise<void> {
  server.runtime.input.push(line("c", "session.create"));
  await until(() => server.frames().some((frame) => frame.id === "c"), "the session");
  const sessionId = (server.frames().find((frame) => frame.id === "c")!.result as { session_id: string }).session_id;
  server.provider.enqueue(reply(API, { calls: [{ id: "call_1", name: "code", args: { source: "tools.write_file({ path: 'x.txt', content: 'x' }); return 'left it waiting';" } }] }));
  server.provider.enqueue(reply(API, { text: ["Done."] }));
  server.runtime.input.push(line("t", "turn.start", { session_id: sessionId, prompt: "write it" }));
  await until(() => events(server, "approval.requested").length === 1, "approval.requested");
  assert.match(String(events(server, "approval.requested")[0]!.summary), /^Code Mode: Write 1 byte to "x\.txt"/);
  writeFileSync(marker, "");
  await until(() => events(server, "run.finished").length === 1, "run.finished, with the approval never answered");
  assert.equal(events(server, "run.finished")[0]!.outcome, "completed");
  assert.deepEqual(events(server, "approval.resolved").map((data) => data.outcome), ["superseded"]);
  assert.deepEqual(events(server, "activity").map((data) => `${data.name}:${data.state}`), ["code:started", "write_file:failed", "code:completed"]);
  assert.match(String(events(server, "activity")[1]!.summary), /^Code Mode: .*\(cancelled\)$/);
  const writeCard = events(server, "tool.card").map((data) => data.card as { tool: string; decision: string | null; outcome: string | null }).filter((card) => card.tool === "write_file").at(-1)!;
  assert.deepEqual([writeCard.decision, writeCard.outcome], ["superseded", "cancelled"], "the card says the question was withdrawn, in the same word");
  assert.equal(server.runtime.fs.contents("/work/project/x.txt") ?? null, null, "the withdrawn call never ran");
  const toolMessage = (server.provider.log[1]!.body as { messages: { role: string; content: string }[] }).messages.find((message) => message.role === "tool")!;
  assert.match(toolMessage.content, /The program returned:\nleft it waiting/);
  assert.equal(await stopTurnServer(server), 0);
}
