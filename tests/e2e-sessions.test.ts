import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { encodeRecord, type SessionRecord } from "../src/store/records.ts";
import { guarded } from "./support/hang-guard.ts";
import { type Launcher, launchers, type Spawned, spawnDirect } from "./support/processes.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-sessions-"));
after(() => rmSync(root, { recursive: true, force: true }));

const at = "2026-11-29T10:00:00.000Z";
const envelope = (id: string, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`;

type Frame = { id: string | null; result?: Record<string, unknown>; error?: { code: string } };

/** A child with a line reader: `call` sends one request and resolves with its response. */
class Client {
  readonly #child: Spawned;
  readonly #waiting = new Map<string, (frame: Frame) => void>();
  #buffer = "";

  constructor(launcher: Launcher, cwd: string, home: string) {
    this.#child = spawnDirect(launcher, ["serve", "--stdio"], { cwd, env: { ...process.env, MC_HOME: home } });
    this.#child.stdout.on("data", (chunk: Buffer) => {
      this.#buffer += chunk.toString("utf8");
      for (let lf = this.#buffer.indexOf("\n"); lf !== -1; lf = this.#buffer.indexOf("\n")) {
        const frame = JSON.parse(this.#buffer.slice(0, lf)) as Frame;
        this.#buffer = this.#buffer.slice(lf + 1);
        if (frame.id !== null) this.#waiting.get(frame.id)?.(frame);
      }
    });
  }

  /** Bounded by a hang guard: a child that never answers fails the test, naming the request. */
  call(id: string, method: string, params: Record<string, unknown> = {}): Promise<Frame> {
    const answered = new Promise<Frame>((resolve) => {
      this.#waiting.set(id, resolve);
      this.#child.stdin.write(envelope(id, method, params));
    });
    return guarded(answered, `the response to ${method} (${id})`).finally(() => this.#waiting.delete(id));
  }

  async stop(): Promise<number | null> {
    this.#child.stdin.end();
    return await guarded(this.#child.exited, "the child to exit after EOF");
  }
}

function seed(home: string, cwd: string, id: string): void {
  const records: SessionRecord[] = [
    { v: 1, type: "session", session_id: id, at, created_at: at, cwd },
    { v: 1, type: "turn_started", session_id: id, at, turn_id: "t0", run_id: "r0" },
    { v: 1, type: "user_input", session_id: id, at, turn_id: "t0", message_id: "u0", text: "hello" },
    { v: 1, type: "assistant_message", session_id: id, at, turn_id: "t0", message_id: "a0", text: "hi", partial: false },
    { v: 1, type: "turn_finished", session_id: id, at, turn_id: "t0", outcome: "completed", error_code: null },
  ];
  mkdirSync(join(home, "sessions"), { recursive: true, mode: 0o700 });
  const text = records.map((record) => new TextDecoder().decode(encodeRecord(record)!)).join("");
  writeFileSync(join(home, "sessions", `${id}.jsonl`), text, { mode: 0o600 });
}

const capabilities = { required_capabilities: ["session.open", "history.page", "shutdown"] };

describe("two real children contending for one session", () => {
  const [node, deno] = launchers() as [Launcher, Launcher];
  for (const [first, second] of [[node, deno], [deno, node], [node, node]] as const) {
    it(`${first.name} and ${second.name}: exactly one open wins, the other gets session_busy until the winner exits`, async () => {
      const cwd = realpathSync(mkdtempSync(join(root, "cwd-")));
      const home = join(root, `home-${first.name}-${second.name}`);
      seed(home, cwd, "shared");
      const a = new Client(first, cwd, home);
      const b = new Client(second, cwd, home);
      assert.ok((await a.call("i", "initialize", capabilities)).result);
      assert.ok((await b.call("i", "initialize", capabilities)).result);
      const outcomes = await Promise.all([
        a.call("o1", "session.open", { session_id: "shared" }),
        b.call("o1", "session.open", { session_id: "shared" }),
      ]);
      const codes = outcomes.map((frame) => frame.error?.code ?? "ok").sort();
      assert.deepEqual(codes, ["ok", "session_busy"]);
      const [winner, loser] = outcomes[0]!.result ? [a, b] : [b, a];
      assert.equal((await loser.call("o2", "session.open", { session_id: "shared" })).error?.code, "session_busy");
      assert.equal(await winner.stop(), 0);
      const reopened = await loser.call("o3", "session.open", { session_id: "shared" });
      assert.equal(reopened.result?.durable, true);
      const page = await loser.call("h1", "history.page", { session_id: "shared", revision: reopened.result!.revision });
      assert.deepEqual((page.result!.entries as { text: string }[]).map((entry) => entry.text), ["hello", "hi"]);
      assert.equal(await loser.stop(), 0);
    });
  }
});
