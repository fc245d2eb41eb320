/**
 * The `tool.cards` extension (docs/features/local-agent-tool-cards.md)
 * through the real entry points over real pipes, against a loopback
 * provider: a base client's frames are those of the checked-in transcript,
 * byte for byte; a negotiating client gets exactly the documented additions;
 * a write's diff is in the card before the approval is answered, and a
 * denial leaves the file untouched; a long diff is cut with its marker; a
 * command's 10 MiB of output arrives as a bounded head and tail with the
 * middle counted; a cancelled command's card names the signal, and one
 * whose wait had to be abandoned says `unknown`.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { guarded } from "./support/hang-guard.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { baseTranscript, scriptedTurn } from "./support/transcripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, type WireFrame, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-cards-"));
after(() => rmSync(root, { recursive: true, force: true }));

const CARDS = [...TURN_CAPABILITIES, "tool.cards"];

type CardData = Record<string, unknown> & { card: Record<string, unknown> & { shell: Record<string, unknown> | null } };

/** The `tool.card` events' data among `events`. */
const cardsOf = (events: readonly WireFrame[]) => events.filter((frame) => frame.event === "tool.card").map((frame) => frame.data as CardData);

/** A negotiating child in a fresh workspace with `settings`, its session, and the provider it talks to. */
async function cardsChild(launcher: Launcher, name: string, settings: Record<string, unknown> = {}) {
  const provider = await startFakeProvider();
  const ws = workspace(root, `${name}-${launcher.name}`, provider, settings);
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    await client.ok("initialize", { required_capabilities: CARDS });
    const sessionId = (await client.ok("session.create")).session_id as string;
    return { provider, ws, client, sessionId };
  } catch (error) {
    // A child that refused the negotiation must not outlive the test.
    client.abandon();
    await provider.close();
    throw error;
  }
}

/** Starts a turn whose model makes `call` and then answers; returns its run id. */
async function callTurn(child: { provider: FakeProvider; client: WireClient; sessionId: string }, call: { name: string; args: Record<string, unknown> }) {
  child.provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", ...call }] }));
  child.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
  return (await child.client.ok("turn.start", { session_id: child.sessionId, prompt: "go" })).run_id as string;
}

/** Ends a child and its provider, asserting a clean exit. */
async function close(child: { provider: FakeProvider; client: WireClient }) {
  try {
    assert.equal((await child.client.shutdown()).code, 0);
    assert.equal(await child.client.stderr, "");
  } finally {
    child.client.abandon();
    await child.provider.close();
  }
}

/** Resolves once `path` exists with content (hang-guarded; the command writes it when it runs). */
function fileAppears(path: string): Promise<void> {
  return guarded((async () => {
    while (!existsSync(path) || readFileSync(path, "utf8").trim() === "") await new Promise((resolve) => setTimeout(resolve, 5));
  })(), `${path} to appear`);
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: tool.cards over real pipes`, () => {
    it("a client that does not negotiate tool.cards sees byte for byte the checked-in base transcript, no extensions key", async () => {
      const base = await scriptedTurn(launcher, root, "base", TURN_CAPABILITIES);
      assert.deepEqual(base.masked, baseTranscript());
      assert.equal("extensions" in base.initialized, false);
      assert.equal((base.initialized.capabilities as string[]).includes("tool.cards"), false);
    });

    it("a negotiating client gets the capability, the descriptor, card_id on the first activity and an initial and terminal card", async () => {
      const negotiated = await scriptedTurn(launcher, root, "negotiated", CARDS);
      assert.ok((negotiated.initialized.capabilities as string[]).includes("tool.cards"));
      assert.deepEqual(negotiated.initialized.extensions, {
        "tool.cards": {
          schema_version: 1,
          kinds: ["read", "write", "edit", "shell", "other"],
          limits: {
            card_bytes: 16_384,
            diff_bytes: 8_192,
            output_head_bytes: 2_048,
            output_tail_bytes: 2_048,
            run_detail_bytes: 2_097_152,
            history_card_bytes: 8_388_608,
          },
        },
      });
      // Without the card events and the one card_id field, the negotiated transcript is the base one.
      const isCard = (line: string) => line.includes('"event":"tool.card"');
      const stripped = negotiated.masked.filter((line) => !isCard(line)).map((line) => line.replace(',"card_id":"card.t1"', ""));
      assert.deepEqual(stripped, baseTranscript());
      const names = negotiated.masked.map((line) => isCard(line) ? "card" : line.includes('"card_id"') ? "activity+card_id" : (/"event":"([a-z.]+)"/u.exec(line)![1]!));
      assert.deepEqual(names, ["input.persisted", "message.reconcile", "card", "activity+card_id", "activity", "card", "message.reconcile", "run.finished"]);
      const [initial, terminal] = cardsOf(negotiated.events);
      assert.deepEqual([initial!.card_id, initial!.activity_id, initial!.stage, initial!.revision], ["card.t1", "t1", "initial", 0]);
      assert.deepEqual(
        [initial!.card.kind, initial!.card.path, initial!.card.phase, initial!.card.decision, initial!.card.outcome, initial!.card.read],
        ["read", "a.txt", "running", "not_asked", null, null],
      );
      assert.deepEqual([terminal!.stage, terminal!.revision, terminal!.card.phase, terminal!.card.outcome, terminal!.card.effect], ["terminal", 1, "finished", "completed", "none"]);
      assert.deepEqual(terminal!.card.read, { lines: 1, bytes: 6, truncated: false });
      assert.equal(terminal!.card.summary, 'read_file "a.txt": 1 line (6 bytes)');
    });

    it("an edit's card carries the diff before approval.requested; denying it leaves the file untouched and the card denied", async () => {
      const child = await cardsChild(launcher, "deny");
      try {
        writeFileSync(join(child.ws.cwd, "notes.txt"), "one\ntwo\nthree\n");
        const runId = await callTurn(child, { name: "edit_file", args: { path: "notes.txt", old_text: "two", new_text: "TWO" } });
        const approval = await child.client.event(runId, "approval.requested");
        const initialFrame = child.client.eventsOf(runId).find((frame) => frame.event === "tool.card")!;
        assert.ok(initialFrame.seq < approval.seq, "the card precedes the approval request");
        const initial = initialFrame.data as CardData;
        assert.equal(initial.stage, "initial");
        assert.deepEqual([initial.card.kind, initial.card.phase, initial.card.decision, initial.card.path], ["edit", "awaiting_approval", null, "notes.txt"]);
        assert.deepEqual(initial.card.write, { mode: "edit", bytes_before: 14, bytes_after: 14, replacements: 1 });
        const diff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
        assert.deepEqual(initial.card.diff, { text: diff, truncated: false, total_bytes: diff.length });
        await child.client.ok("approval.answer", { session_id: child.sessionId, run_id: runId, approval_id: approval.data!.approval_id, allow: false });
        const events = await child.client.runEvents(runId);
        const cards = cardsOf(events);
        assert.equal(cards.length, 2, "no update: the call never ran");
        const terminal = cards[1]!;
        assert.deepEqual([terminal.stage, terminal.card.decision, terminal.card.outcome, terminal.card.effect], ["terminal", "denied", "denied", "none"]);
        assert.deepEqual(terminal.card.diff, initial.card.diff);
        assert.equal(readFileSync(join(child.ws.cwd, "notes.txt"), "utf8"), "one\ntwo\nthree\n");
        const activity = events.find((frame) => frame.event === "activity")!.data!;
        assert.deepEqual([activity.state, activity.card_id], ["failed", "card.t1"]);
      } finally {
        await close(child);
      }
    });

    it("a call denied by settings and one refused before it was prepared each have one terminal card, at revision 0", async () => {
      const child = await cardsChild(launcher, "refused", { tools: { write_file: "deny" } });
      try {
        child.provider.enqueue(reply("openai-chat", {
          calls: [
            { id: "call_1", name: "write_file", args: { path: "x.txt", content: "x" } },
            { id: "call_2", name: "edit_file", args: { path: "missing.txt", old_text: "a", new_text: "b" } },
          ],
        }));
        child.provider.enqueue(reply("openai-chat", { text: ["Done."] }));
        const runId = (await child.client.ok("turn.start", { session_id: child.sessionId, prompt: "go" })).run_id as string;
        const events = await child.client.runEvents(runId);
        const cards = cardsOf(events);
        assert.deepEqual(cards.map((data) => [data.card_id, data.stage, data.revision, data.card.kind, data.card.decision, data.card.outcome, data.card.effect, data.card.path]), [
          ["card.t1", "terminal", 0, "write", null, "denied", "none", null],
          ["card.t2", "terminal", 0, "edit", null, "failed", "none", null],
        ]);
        const activities = events.filter((frame) => frame.event === "activity").map((frame) => frame.data!);
        assert.deepEqual(activities.map((data) => [data.activity_id, data.state, data.card_id]), [["t1", "failed", "card.t1"], ["t2", "failed", "card.t2"]]);
        assert.equal(existsSync(join(child.ws.cwd, "x.txt")), false);
      } finally {
        await close(child);
      }
    });

    it("a write whose diff is over diff_bytes is cut with its marker and full size; approved, the card says applied", async () => {
      const child = await cardsChild(launcher, "big-diff");
      try {
        const content = Array.from({ length: 2_000 }, (_, index) => `line ${index}\n`).join("");
        const runId = await callTurn(child, { name: "write_file", args: { path: "big.txt", content } });
        const approval = await child.client.event(runId, "approval.requested");
        await child.client.ok("approval.answer", { session_id: child.sessionId, run_id: runId, approval_id: approval.data!.approval_id, allow: true });
        const cards = cardsOf(await child.client.runEvents(runId));
        assert.deepEqual(cards.map((data) => [data.stage, data.revision, data.card.phase, data.card.decision]), [
          ["initial", 0, "awaiting_approval", null],
          ["update", 1, "running", "allowed"],
          ["terminal", 2, "finished", "allowed"],
        ]);
        const diff = cards[0]!.card.diff as { text: string; truncated: boolean; total_bytes: number };
        const whole = `--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,2000 @@\n${content.replace(/^/gmu, "+")}`.slice(0, -1);
        assert.equal(diff.truncated, true);
        assert.equal(diff.total_bytes, Buffer.byteLength(whole));
        assert.ok(Buffer.byteLength(diff.text) <= 8_192);
        const shown = Buffer.byteLength(diff.text.slice(0, diff.text.lastIndexOf("\n[…")));
        assert.ok(diff.text.endsWith(`\n[… diff truncated: ${shown} of ${diff.total_bytes} bytes shown …]`), diff.text.slice(-80));
        assert.ok(whole.startsWith(diff.text.slice(0, diff.text.lastIndexOf("\n[…"))));
        assert.deepEqual([cards[2]!.card.outcome, cards[2]!.card.effect], ["completed", "applied"]);
        assert.ok(cards.every((data) => Buffer.byteLength(JSON.stringify(data.card)) <= 16_384));
        assert.equal(readFileSync(join(child.ws.cwd, "big.txt"), "utf8"), content);
      } finally {
        await close(child);
      }
    });

    it("saved cards: history.page attaches each activity's card, a reopened session pages the same, a base client sees none", async () => {
      const child = await cardsChild(launcher, "saved");
      const page = async (client: WireClient, revision: string) =>
        (await client.ok("history.page", { session_id: child.sessionId, revision, cursor: null })).entries as Record<string, unknown>[];
      const reopen = async (capabilities: readonly string[]) => {
        const client = new WireClient(launcher, child.ws.cwd, child.ws.env);
        await client.ok("initialize", { required_capabilities: capabilities });
        const opened = await client.ok("session.open", { session_id: child.sessionId });
        const entries = await page(client, opened.revision as string);
        assert.equal((await client.shutdown()).code, 0);
        client.abandon();
        return entries;
      };
      let live: CardData;
      let first: Record<string, unknown>[];
      try {
        writeFileSync(join(child.ws.cwd, "notes.txt"), "one\ntwo\nthree\n");
        const runId = await callTurn(child, { name: "edit_file", args: { path: "notes.txt", old_text: "two", new_text: "TWO" } });
        const approval = await child.client.event(runId, "approval.requested");
        await child.client.ok("approval.answer", { session_id: child.sessionId, run_id: runId, approval_id: approval.data!.approval_id, allow: true });
        const events = await child.client.runEvents(runId);
        live = cardsOf(events).at(-1)!;
        first = await page(child.client, events.at(-1)!.data!.revision as string);
      } finally {
        await close(child);
      }
      const activity = first.find((entry) => entry.kind === "activity")!;
      assert.deepEqual(activity.card, live.card);
      assert.ok(first.filter((entry) => entry.kind !== "activity").every((entry) => !("card" in entry)));
      assert.deepEqual(await reopen(CARDS), first);
      const base = await reopen(TURN_CAPABILITIES);
      assert.deepEqual(base, first.map(({ card: _, ...entry }) => entry));
      assert.ok(base.every((entry) => !("card" in entry)));
    });

    it("10 MiB of shell output arrives as a bounded head and tail with the middle counted", async () => {
      const child = await cardsChild(launcher, "shell-big", { tools: { shell: "allow" } });
      try {
        const runId = await callTurn(child, { name: "shell", args: { command: "head -c 10485760 /dev/zero | tr '\\0' a; echo; echo end" } });
        const cards = cardsOf(await child.client.runEvents(runId));
        assert.deepEqual(cards.map((data) => data.stage), ["initial", "terminal"]);
        const shell = cards[1]!.card.shell!;
        const output = shell.output as { head: string; tail: string; total_bytes: number; omitted_bytes: number };
        assert.deepEqual([shell.ending, shell.exit_code, shell.signal, shell.cwd, cards[1]!.card.outcome, cards[1]!.card.effect], ["exit", 0, null, ".", "completed", "unknown"]);
        assert.equal(output.total_bytes, 10_485_760 + 5);
        assert.ok(output.head.length === 2_048 && /^a+$/u.test(output.head));
        assert.ok(output.tail.endsWith("aaa\nend\n") && Buffer.byteLength(output.tail) <= 2_048);
        assert.equal(output.omitted_bytes, output.total_bytes - Buffer.byteLength(output.head + output.tail));
        assert.ok(typeof shell.duration_ms === "number");
      } finally {
        await close(child);
      }
    });

    it("a running command's card is updated with its output so far, then the terminal snapshot follows", async () => {
      const child = await cardsChild(launcher, "shell-live", { tools: { shell: "allow" } });
      try {
        const go = join(child.ws.cwd, "go");
        const runId = await callTurn(child, { name: "shell", args: { command: `echo first; while [ ! -f ${go} ]; do sleep 0.05; done; echo second` } });
        const update = await child.client.waitFor((frame) => {
          const data = frame.data as CardData | undefined;
          return frame.event === "tool.card" && data?.run_id === runId && data.stage === "update" && (data.card.shell?.output as { head?: string } | null)?.head === "first\n";
        }, "an update with the output so far");
        assert.deepEqual((update.data as CardData).card.shell!.ending, null);
        writeFileSync(go, "");
        const cards = cardsOf(await child.client.runEvents(runId));
        const terminal = cards.at(-1)!;
        assert.equal(terminal.stage, "terminal");
        assert.deepEqual((terminal.card.shell!.output as { head: string }).head, "first\nsecond\n");
        assert.ok(cards.every((data, index) => index === 0 || (data.revision as number) > (cards[index - 1]!.revision as number)));
        assert.equal(cards.filter((data) => data.stage === "terminal").length, 1);
      } finally {
        await close(child);
      }
    });

    it("a command cancelled with its turn gets a terminal card naming the signal", async () => {
      const child = await cardsChild(launcher, "shell-cancel", { tools: { shell: "allow" } });
      try {
        const running = join(child.ws.cwd, "running");
        const runId = await callTurn(child, { name: "shell", args: { command: `echo up > ${running}; sleep 30` } });
        await fileAppears(running);
        await child.client.ok("turn.cancel", { session_id: child.sessionId, run_id: runId });
        const events = await child.client.runEvents(runId);
        const terminal = cardsOf(events).at(-1)!;
        assert.deepEqual([terminal.stage, terminal.card.outcome, terminal.card.effect], ["terminal", "cancelled", "unknown"]);
        assert.deepEqual([terminal.card.shell!.ending, terminal.card.shell!.signal, terminal.card.shell!.exit_code], ["cancelled", "SIGTERM", null]);
        assert.equal(events.at(-1)!.data!.outcome, "cancelled");
      } finally {
        await close(child);
      }
    });

    it("a command whose output outlives its killed group is abandoned: the card's outcome is unknown", async () => {
      const child = await cardsChild(launcher, "shell-unknown", { tools: { shell: "allow" } });
      const escaped = join(child.ws.cwd, "escaped.pid");
      try {
        const running = join(child.ws.cwd, "running");
        // The setsid child leaves the group holding the output pipes, so the wait for them is abandoned.
        const command = `setsid sh -c 'echo $$ > ${escaped}; exec sleep 30' & echo up > ${running}; sleep 30`;
        const runId = await callTurn(child, { name: "shell", args: { command } });
        await Promise.all([fileAppears(running), fileAppears(escaped)]);
        await child.client.ok("turn.cancel", { session_id: child.sessionId, run_id: runId });
        const terminal = cardsOf(await child.client.runEvents(runId)).at(-1)!;
        assert.deepEqual([terminal.card.outcome, terminal.card.effect, terminal.card.shell!.ending], ["unknown", "unknown", "abandoned"]);
      } finally {
        if (existsSync(escaped)) {
          try {
            process.kill(Number(readFileSync(escaped, "utf8")), "SIGKILL");
          } catch { /* already gone */ }
        }
        await close(child);
      }
    });
  });
}
