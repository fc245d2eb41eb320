/**
 * The record-format compatibility corpus (`tests/fixtures/records/`, see
 * docs/storage.md, "How the record format evolves"): histories as earlier
 * and later writers left them on users' disks, read through the real store
 * on real files (the Node adapter, and the Deno adapter under Deno) and
 * compared with what `expected.json` says this release makes of them: the
 * open, every history page, the restored selection, the provider replay and
 * the listing entry.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createNodeRuntime } from "../runtime/node-runtime.ts";
import type { Runtime } from "../src/host/runtime.ts";
import { replayConversation } from "../src/runner/replay.ts";
import { loadAttachment } from "../src/store/attachment.ts";
import { SessionListing } from "../src/store/discovery/listing.ts";
import { SessionStore } from "../src/store/sessions.ts";
import { deno, scratch } from "./support/fs-adapters.ts";
import { repoRoot } from "./support/processes.ts";

const CORPUS = join(repoRoot(), "tests", "fixtures", "records");

/**
 * The SHA-256 of every corpus history. A corpus file stands for files users
 * already have: it is never edited, reformatted or regenerated, and this list
 * only ever grows. A new record-format version, or a new addition within one,
 * adds a new file (and its line here and in `expected.json`); when this check
 * fails, restore the file instead of updating its hash.
 */
const CORPUS_SHA256: Readonly<Record<string, string>> = {
  "v1.jsonl": "4a130846c706466656d51580ec4aba147913aa46883d0ae6025df1869226f64a",
  "future-skippable.jsonl": "4636cc1f026e3ffee8d8fd5577c3b0b9c7284b0ae245ec71f99efc9a8b517280",
  "future-rewind.jsonl": "c8a1532f2c1abc9c875472cd650e460568b057de284aedd389bca882555e3d69",
  "future-compaction.jsonl": "cd3832fcaaa5a1858676254c3b57cbca43ddd35b7ecb8bae43f6be3577fd15ab",
  "v1-turn-context.jsonl": "d75ab6c284b88b8932312763bfe082671714be1cc4c79a3340c392155dd67923",
  "v2.jsonl": "009fbdf93a45fcfb45b74cd67865e9aba88e871e4ee7aeadf731bfcb2bb62706",
  "future-compaction-v3.jsonl": "0086637f819e1cd01ea129eb1147bd9404c5ba8f32759cb9b94270fe16de102f",
  "v1-turn-context-skills-profile.jsonl": "38a6fca0e3008c70247a7c097f6980092bb8123936af750a86706ed72d088d2a",
  "v1-usage-cached.jsonl": "87c5cec42e8d54be84a144e4c236aacb8d82e57073d851cba828a8e5eb3a7cb2",
  "v1-activity-session-grant.jsonl": "618af1c847160de1cb01c2d82f7b99c5db36e0af5f887043d0c0f2e85f20f0a2",
  "v3-subagent-link.jsonl": "8c92a8e9f6d2d70fd1a64ea0b8178e87109118554bff005e0972d4a5ba8f5d5b",
  "v3-tool-cards.jsonl": "26d20810bc482896b61de6239e0bc4af2c7dc711eca212f777e961b25645f700",
  "v4-rewind.jsonl": "37b76b59e9556137878b5464349fe20e18a3f2a1201f001e0615c1b7f94bd24c",
  "v3-subagent-link-unnamed.jsonl": "23ddafa5fd5ea3d0b453ee5097e8a726f289a88b8616a3393c95f3aa4a7a2a0b",
};

/** What this release makes of one corpus history. */
type Expected =
  | {
    readonly session_id: string;
    readonly open: { readonly durable: boolean; readonly notices: readonly string[] };
    readonly preferences: unknown;
    readonly entries: readonly unknown[];
    readonly complete: boolean;
    readonly replay: readonly unknown[];
    readonly listed: unknown;
  }
  | { readonly session_id: string; readonly open: string; readonly listed: null };

const expected = JSON.parse(readFileSync(join(CORPUS, "expected.json"), "utf8")) as Record<string, Expected>;
const never = new AbortController().signal;
const runtimes: [string, () => Runtime][] = [
  ["Node", createNodeRuntime],
  ...(deno === null ? [] : [["Deno", () => deno!.createDenoRuntime()] as [string, () => Runtime]]),
];
let homes = 0;

/** A fresh `MC_HOME` whose sessions directory holds the corpus files, each under its session's name. */
function homeWithCorpus(): { home: string; sessions: string } {
  const home = join(realpathSync(scratch), `corpus-${homes++}`);
  const sessions = join(home, "sessions");
  mkdirSync(sessions, { recursive: true, mode: 0o700 });
  for (const [name, { session_id }] of Object.entries(expected)) {
    const path = join(sessions, `${session_id}.jsonl`);
    writeFileSync(path, readFileSync(join(CORPUS, name)), { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  return { home, sessions };
}

/** Opens `sessionId`, pages its whole history and rebuilds its replay, as a client and a next turn would. */
async function readThroughStore(runtime: Runtime, home: string, sessionId: string) {
  // Every corpus history records the cwd `/`, which canonicalises to itself on any machine.
  const store = new SessionStore({ runtime, home, cwd: "/", instanceId: "corpus", secrets: [] });
  try {
    const opened = await store.open(sessionId, never);
    if (!opened.ok) return { open: opened.code };
    const entries: unknown[] = [];
    let cursor: string | null = null;
    let complete = false;
    do {
      const page = await store.page(sessionId, opened.result.revision, cursor);
      assert.ok(page.ok, `history.page: ${page.ok ? "" : page.code}`);
      entries.push(...page.result.entries);
      cursor = page.result.next_cursor;
      complete = page.result.complete;
    } while (cursor !== null);
    const context = { runtime, instanceId: "corpus", cwd: "/", secrets: [], nextGeneration: () => 1 };
    const loaded = await loadAttachment(context, join(home, "sessions", `${sessionId}.jsonl`), sessionId, never, true);
    assert.ok(loaded.ok);
    return {
      open: { durable: opened.result.durable, notices: opened.result.notices },
      preferences: store.preferences,
      entries,
      complete,
      replay: replayConversation(loaded.attachment.conversation),
    };
  } finally {
    await store.close();
  }
}

describe("record-format compatibility corpus", () => {
  it("every corpus history is byte for byte the one first checked in, and each has an expectation", () => {
    const names = readdirSync(CORPUS).filter((name) => name.endsWith(".jsonl")).sort();
    assert.deepEqual(names, Object.keys(CORPUS_SHA256).sort(), "a corpus file was added or removed without its hash");
    for (const name of names) {
      const digest = createHash("sha256").update(readFileSync(join(CORPUS, name))).digest("hex");
      assert.equal(digest, CORPUS_SHA256[name], `${name} changed: corpus files are never regenerated`);
    }
    assert.deepEqual(Object.keys(expected).sort(), names);
  });

  for (const [runtimeName, create] of runtimes) {
    for (const [name, wanted] of Object.entries(expected)) {
      it(`session.open, history.page and the replay of ${name} through the ${runtimeName} adapter are what expected.json says`, async () => {
        const { home } = homeWithCorpus();
        const read = await readThroughStore(create(), home, wanted.session_id);
        const { session_id: _, listed: __, ...rest } = wanted;
        // Through JSON: the comparison is with the checked-in text, not with object identities or prototypes.
        assert.deepEqual(JSON.parse(JSON.stringify(read)), rest);
      });
    }

    it(`session.list of the corpus through the ${runtimeName} adapter lists exactly the histories session.open admits`, async () => {
      const { sessions } = homeWithCorpus();
      const listing = new SessionListing({ runtime: create(), directory: sessions, cwd: "/", secrets: [], attached: () => null });
      const listed = await listing.list({}, never);
      assert.ok(listed.ok, listed.ok ? "" : listed.code);
      const wanted = Object.values(expected).map((entry) => entry.listed).filter((entry) => entry !== null);
      wanted.sort((a, b) => ((a as { session_id: string }).session_id < (b as { session_id: string }).session_id ? -1 : 1));
      assert.deepEqual(JSON.parse(JSON.stringify(listed.result.sessions)), wanted);
      const refused = Object.values(expected).some((entry) => entry.listed === null);
      assert.deepEqual(listed.result.notices, refused ? ["sessions_omitted_invalid"] : []);
    });
  }
});
