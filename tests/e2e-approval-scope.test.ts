/**
 * `approval.scope` through the real entry points (the Node bundle and the
 * Deno entry) over real pipes, against a loopback provider: a client that
 * does not negotiate it sees, byte for byte, the events of an approved
 * write that a client saw before the extension existed (a checked-in
 * transcript, ids masked); one that negotiates it sees the same events but
 * for the request's two extra fields and one `approval.resolved`, and a
 * session answer lets the next write of the same file run unasked.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { type Launcher, launchers, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-scope-"));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * A base client's events of the scripted turn (one write_file call, allowed,
 * then the answer) as the release before `approval.scope` wrote them
 * (captured from its build, deltas left out, ids masked). Never regenerate
 * it: it is what base clients were promised.
 */
const BASE_TRANSCRIPT = join(repoRoot(), "tests", "fixtures", "transcripts", "base-approval-turn.jsonl");

/** The run's event lines as written, deltas left out, with what differs between children masked. */
function maskedEvents(client: WireClient, runId: string): string[] {
  const out: string[] = [];
  client.frames.forEach((frame, index) => {
    if (frame.type !== "event" || frame.data?.run_id !== runId || frame.event === "message.delta") return;
    let text = client.lines[index]!
      .replaceAll(frame.instance_id as string, "<instance>")
      .replaceAll(frame.data.session_id as string, "<session>")
      .replaceAll(runId, "<run>")
      .replace(/"seq":\d+/u, '"seq":"<seq>"')
      .replace(/"revision":"[^"]+"/u, '"revision":"<revision>"');
    if (typeof frame.data.approval_id === "string") text = text.replaceAll(frame.data.approval_id, "<approval>");
    out.push(text);
  });
  return out;
}

/** One child's turns: each writes `a.txt` and is answered `allow` with `scopes[i]` (undefined: no scope field, or not asked). */
async function scriptedTurns(launcher: Launcher, name: string, capabilities: readonly string[], scopes: readonly (string | undefined)[]) {
  const provider = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, provider);
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    await client.ok("initialize", { required_capabilities: capabilities });
    const sessionId = (await client.ok("session.create")).session_id as string;
    const turns: string[][] = [];
    for (const [index, scope] of scopes.entries()) {
      provider.enqueue(reply("openai-chat", { text: ["Writing it."], calls: [{ id: `call_${index}`, name: "write_file", args: { path: "a.txt", content: `v${index}\n` } }] }));
      provider.enqueue(reply("openai-chat", { text: ["Done."] }));
      const runId = (await client.ok("turn.start", { session_id: sessionId, prompt: `Write version ${index}.` })).run_id as string;
      if (index === 0 || scope !== undefined) {
        const requested = await client.event(runId, "approval.requested");
        await client.ok("approval.answer", { session_id: sessionId, run_id: runId, approval_id: requested.data!.approval_id, allow: true, ...(scope === undefined ? {} : { scope }) });
      }
      await client.runEvents(runId);
      turns.push(maskedEvents(client, runId));
    }
    assert.equal(readFileSync(join(ws.cwd, "a.txt"), "utf8"), `v${scopes.length - 1}\n`);
    assert.equal((await client.shutdown()).code, 0);
    assert.equal(await client.stderr, "");
    return turns;
  } finally {
    client.abandon();
    await provider.close();
  }
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: approval.scope over real pipes`, () => {
    it("a client that does not negotiate approval.scope sees byte for byte the events of an approved write it saw before the extension", async () => {
      const [base] = await scriptedTurns(launcher, "base", TURN_CAPABILITIES, [undefined]);
      const expected = readFileSync(BASE_TRANSCRIPT, "utf8").split("\n").filter((line) => line !== "");
      assert.deepEqual(base, expected);
    });

    it("a negotiating client sees the same events plus scopes, scope_key and one approval.resolved; its session answer covers the next write of the file", async () => {
      const expected = readFileSync(BASE_TRANSCRIPT, "utf8").split("\n").filter((line) => line !== "");
      const [first, second] = await scriptedTurns(launcher, "scoped", [...TURN_CAPABILITIES, "approval.scope"], ["session", undefined]);
      const requested = first!.findIndex((text) => text.includes('"event":"approval.requested"'));
      assert.equal(first![requested], expected[requested]!.replace(/\}\}$/u, ',"scopes":["once","session"],"scope_key":"write_file \\"a.txt\\""}}'));
      assert.equal(
        first![requested + 1],
        '{"protocol":"magi-code.local-agent","version":1,"type":"event","instance_id":"<instance>","seq":"<seq>","event":"approval.resolved","data":{"session_id":"<session>","run_id":"<run>","approval_id":"<approval>","outcome":"allowed"}}',
      );
      assert.deepEqual([...first!.slice(0, requested), ...first!.slice(requested + 2)], expected.filter((_, index) => index !== requested));
      // Run under the grant: no request, no resolution; the write itself as before.
      assert.equal(second!.some((text) => text.includes('"event":"approval.')), false);
      assert.equal(second!.filter((text) => text.includes('"event":"activity"')).length, 2);
    });
  });
}
