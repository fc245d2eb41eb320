// The first append to a lazy session creates its file with the `session`
// record in front; every record of that file is stamped in file order, on the
// selection.set path and on the turn path, however long the leases taken in
// between take. A manual clock moved by the filesystem makes "in between"
// visible without real time.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { seedCache } from "./support/catalog.ts";
import { startFakeProvider } from "./support/fake-provider.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, request, runEvents, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";

/** A memory filesystem on which every exclusive creation (a lease, the new history file) takes a millisecond of `clock`. */
class TickingStorage extends MemoryFileSystem {
  constructor(readonly clock: ManualClock) {
    super({ now: () => clock.wallNow() });
  }
  override createExclusive(path: string, bytes: Uint8Array, mode: number): Promise<void> {
    this.clock.advance(1);
    return super.createExclusive(path, bytes, mode);
  }
}

async function start(): Promise<{ server: TurnServer; fs: TickingStorage }> {
  const clock = new ManualClock();
  const fs = new TickingStorage(clock);
  const provider = await startFakeProvider();
  const url = `${provider.url}/v1`;
  await seedCache(fs, "ollama", "openai-chat", url, [{ id: "qwen" }]);
  const settings = { providers: { endpoints: { ollama: { base_url: url } }, catalog: { enabled: ["ollama/qwen"] } } };
  const capabilities = ["status", "session.create", "session.open", "turn.start", "model.catalog", "selection.set"];
  return { server: await startTurnServer(API, { clock, fs, provider, settings, capabilities }), fs };
}

/** The records of session `id`'s file, in file order. */
function stored(fs: MemoryFileSystem, id: string): Record<string, string>[] {
  const text = new TextDecoder().decode(fs.contents(`${HOME}/sessions/${id}.jsonl`));
  return text.trim().split("\n").map((line) => JSON.parse(line));
}

/** Asserts that the file opens with its `session` record and that no record is stamped before the one in front of it. */
function assertFileOrder(records: readonly Record<string, string>[]): void {
  assert.equal(records[0]!.type, "session");
  assert.equal(records[0]!.created_at, records[0]!.at);
  // ISO timestamps of one width compare as strings.
  const late = records.findIndex((record, i) => i > 0 && records[i - 1]!.at! > record.at!);
  assert.equal(late, -1, `stamped out of file order: ${records.map((record) => `${record.type} ${record.at}`).join(", ")}`);
}

describe("a lazy session's first append is stamped in file order", () => {
  it("selection.set: the session record is stamped no later than the session_preferences record after it", async () => {
    const { server, fs } = await start();
    try {
      const session = (await request(server, "n1", "session.create")).result!.session_id as string;
      const catalog = (await request(server, "c1", "model.catalog")).result!.revision as string;
      const selection = ((await request(server, "s1", "status")).result!.selection as { revision: string }).revision;
      const params = { session_id: session, selection_revision: selection, catalog_revision: catalog, provider: "ollama", model: "qwen" };
      const set = await request(server, "x1", "selection.set", params);
      assert.equal(set.result?.durable, true, JSON.stringify(set.error));
      const records = stored(fs, session);
      assert.deepEqual(records.map((record) => record.type), ["session", "session_preferences"]);
      assertFileOrder(records);
    } finally {
      await stopTurnServer(server);
    }
  });

  for (const kind of ["lazy", "empty"] as const) {
    it(`turn.start on ${kind === "lazy" ? "a lazy handle" : "an empty stored history"}: the session record is stamped no later than the turn's records after it`, async () => {
      const { server, fs } = await start();
      try {
        const session = kind === "lazy" ? (await request(server, "n1", "session.create")).result!.session_id as string : "empty";
        if (kind === "empty") {
          fs.writeFile(`${HOME}/sessions/empty.jsonl`, "", 0o600);
          assert.equal((await request(server, "o1", "session.open", { session_id: "empty" })).result?.durable, true);
        }
        server.provider.enqueue(reply(API, { text: ["Hello."] }));
        const started = await request(server, "t1", "turn.start", { session_id: session, prompt: "Hi" });
        const events = await runEvents(server, started.result!.run_id as string);
        assert.equal((events.at(-1)!.data as { outcome: string }).outcome, "completed");
        const records = stored(fs, session);
        assert.deepEqual(records.slice(0, 3).map((record) => record.type), ["session", "turn_started", "user_input"]);
        assertFileOrder(records);
      } finally {
        await stopTurnServer(server);
      }
    });
  }
});
