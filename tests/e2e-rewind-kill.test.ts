/**
 * SIGKILL during `session.rewind` with `restore_files: true`, on the real
 * entry points (the Node bundle and the Deno entry) over real pipes: the
 * reopened session shows the conversation either whole or rewound, each
 * file is either as the dropped turns left it or restored, never a file
 * restored under a conversation that still shows the turns that wrote it,
 * and a fresh child reopens the session and takes a complete turn. The kill
 * points are what the client can observe (the request written, the `rewind`
 * record in the file, a file restored, the answer), never sleeps; the test
 * only waits for them to be reached, and each is reached by a rewind that
 * runs to its end, so none can hang.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { startFakeProvider } from "./support/fake-provider.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { guarded, WireClient, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-e2e-rewind-kill-"));
after(() => rmSync(root, { recursive: true, force: true }));

const REWIND = [...TURN_CAPABILITIES, "session.rewind", "session.rewind.preview"];
/** Files the dropped turn writes: the even ones existed before it (restored to `old`), the odd ones it creates (restoring removes them). */
const FILES = 12;
const name = (index: number) => `f${String(index).padStart(2, "0")}.txt`;
const restored = (index: number) => (index % 2 === 0 ? `old ${index}\n` : null);
const written = (index: number) => `new ${index}\n`;

/** Where the child is killed. */
type KillPoint = "sent" | "record" | "first file" | "last file" | "answered";

/** The history at `revision` as kind and text pairs (one page: it is short). */
async function history(client: WireClient, sessionId: string, revision: string): Promise<string[]> {
  const page = await client.ok("history.page", { session_id: sessionId, revision, cursor: null });
  assert.equal(page.next_cursor, null);
  return (page.entries as { kind: string; text: string }[]).map((entry) => `${entry.kind}: ${entry.text}`);
}

/** Resolves once `reached()` holds, checking it again after each short wait: a kill point, not a timing claim. */
async function until(reached: () => boolean, what: string): Promise<void> {
  await guarded((async () => {
    while (!reached()) await new Promise((resolve) => setTimeout(resolve, 1));
  })(), what);
}

/** The content of file `index` now, or null when it does not exist (read once: the child may remove it between a check and a read). */
function contentOf(cwd: string, index: number): string | null {
  try {
    return readFileSync(join(cwd, name(index)), "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
}

for (const launcher of launchers()) {
  describe(`${launcher.name}: SIGKILL during session.rewind with restore_files`, () => {
    for (const point of ["sent", "record", "first file", "last file", "answered"] as const satisfies readonly KillPoint[]) {
      it(`a SIGKILL at "${point}" leaves the conversation whole or rewound, each file as left or restored, and the session reopens and takes a turn`, async () => {
        const provider = await startFakeProvider();
        const ws = workspace(root, `${launcher.name}-${point.replace(" ", "-")}`, provider, { tools: { write_file: "allow" } });
        for (let index = 0; index < FILES; index++) if (restored(index) !== null) writeFileSync(join(ws.cwd, name(index)), restored(index)!);
        const calls = Array.from({ length: FILES }, (_, index) => ({ id: `call_${index}`, name: "write_file", args: { path: name(index), content: written(index) } }));
        provider.enqueue(reply("openai-chat", { text: ["One."] }));
        provider.enqueue(reply("openai-chat", { text: ["Writing."], calls }));
        provider.enqueue(reply("openai-chat", { text: ["Done."] }));
        provider.enqueue(reply("openai-chat", { text: ["Again."] }));
        const client = new WireClient(launcher, ws.cwd, ws.env);
        let sessionId = "";
        let whole: string[] = [];
        let rewound: string[] = [];
        try {
          await client.ok("initialize", { required_capabilities: REWIND });
          sessionId = (await client.ok("session.create")).session_id as string;
          let revision = "";
          for (const prompt of ["first", "second"]) {
            const runId = (await client.ok("turn.start", { session_id: sessionId, prompt })).run_id as string;
            revision = (await client.runEvents(runId)).find((frame) => frame.event === "run.finished")!.data!.revision as string;
          }
          whole = await history(client, sessionId, revision);
          rewound = whole.slice(0, whole.indexOf("user: second"));
          const page = await client.ok("history.page", { session_id: sessionId, revision, cursor: null });
          const target = (page.entries as { kind: string; text: string; message_id: string }[]).find((entry) => entry.kind === "user" && entry.text === "second")!.message_id;
          const sessionFile = join(ws.home, "sessions", `${sessionId}.jsonl`);
          const id = client.send("session.rewind", { session_id: sessionId, revision, message_id: target, restore_files: true });
          const answered = () => client.frames.some((frame) => frame.type === "response" && frame.id === id);
          if (point === "record") await until(() => readFileSync(sessionFile, "utf8").includes('"type":"rewind"'), "the rewind record");
          if (point === "first file") await until(() => contentOf(ws.cwd, 0) === restored(0), "the first file restored");
          if (point === "last file") await until(() => contentOf(ws.cwd, FILES - 1) === restored(FILES - 1), "the last file restored");
          if (point === "answered") await until(answered, "the rewind's answer");
          await client.kill("SIGKILL");
        } finally {
          client.abandon();
        }
        const reopened = new WireClient(launcher, ws.cwd, ws.env);
        try {
          await reopened.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
          const shown = await history(reopened, sessionId, (await reopened.ok("session.open", { session_id: sessionId })).revision as string);
          const isRewound = shown.length === rewound.length;
          assert.deepEqual(shown, isRewound ? rewound : whole);
          // Seen in the file, the record was written before the kill: the conversation is rewound.
          if (point !== "sent") assert.equal(isRewound, true);
          for (let index = 0; index < FILES; index++) {
            const now = contentOf(ws.cwd, index);
            assert.ok(now === written(index) || now === restored(index), `${name(index)} is ${JSON.stringify(now)}`);
            // Never a file put back under a conversation that still shows the turn that wrote it.
            if (!isRewound) assert.equal(now, written(index));
          }
          if (point === "answered") for (let index = 0; index < FILES; index++) assert.equal(contentOf(ws.cwd, index), restored(index));
          const runId = (await reopened.ok("turn.start", { session_id: sessionId, prompt: "again" })).run_id as string;
          const finished = (await reopened.runEvents(runId)).find((frame) => frame.event === "run.finished")!;
          assert.equal(finished.data!.outcome, "completed");
          assert.deepEqual(await history(reopened, sessionId, finished.data!.revision as string), [...(isRewound ? rewound : whole), "user: again", "assistant: Again."]);
          assert.equal((await reopened.shutdown()).code, 0);
        } finally {
          reopened.abandon();
          await provider.close();
        }
      });
    }
  });
}
