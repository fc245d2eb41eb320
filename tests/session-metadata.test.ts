/**
 * What an attachment keeps besides its projection (src/store/session-metadata.ts):
 * the session's token totals, summed from its stored `usage` records, which
 * the `run.usage` event's session totals start from, and whether it holds a
 * title, which decides whether a titling request is made. Folded from the
 * compatibility corpus's histories as `session.open` reads them, and over
 * appends the way a turn extends an attachment.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createMemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { loadAttachment } from "../src/store/attachment.ts";
import type { SessionRecord } from "../src/store/records.ts";
import { foldMetadata, NO_METADATA } from "../src/store/session-metadata.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { repoRoot } from "./support/processes.ts";

const CORPUS = join(repoRoot(), "tests", "fixtures", "records");
const never = new AbortController().signal;

/** The metadata `session.open` folds from corpus history `name` of session `sessionId`. */
async function openedMetadata(name: string, sessionId: string) {
  const fs = new MemoryFileSystem();
  const path = `/home/user/.magi-code/sessions/${sessionId}.jsonl`;
  fs.writeFile(path, readFileSync(join(CORPUS, name)), 0o600);
  const runtime = createMemoryRuntime({ fs });
  const context = { runtime, instanceId: "metadata", cwd: "/", secrets: [], nextGeneration: () => 1 };
  const loaded = await loadAttachment(context, path, sessionId, never, true);
  assert.ok(loaded.ok, loaded.ok ? "" : loaded.code);
  return loaded.attachment.metadata;
}

const at = "2026-12-02T10:00:00.000Z";
const session = "01943a00-0000-7000-8000-0000000000c1";

describe("session metadata", () => {
  it("the corpus's version-1 history sums its two usage records and counts its titles", async () => {
    assert.deepEqual(await openedMetadata("v1.jsonl", "01943a00-0000-7000-8000-000000000001"), { inputTokens: 2_700, outputTokens: 340, titled: true });
  });

  it("a history with cached_input_tokens sums input as stored, records without the field included", async () => {
    assert.deepEqual(await openedMetadata("v1-usage-cached.jsonl", session), { inputTokens: 8_500, outputTokens: 125, titled: true });
  });

  it("folding appended records onto a history's metadata equals folding the whole history", () => {
    const usage = fc.record({ input: fc.nat(1_000_000), output: fc.nat(1_000_000) }).map(({ input, output }): SessionRecord => ({
      v: 1,
      type: "usage",
      session_id: session,
      at,
      turn_id: "t",
      input_tokens: input,
      output_tokens: output,
    }));
    const title = fc.constant<SessionRecord>({ v: 1, type: "session_title", session_id: session, at, title: "A title" });
    const untitledCompaction = fc.constant<SessionRecord>({ v: 1, type: "compaction", session_id: session, at, turn_id: "t", summary: "s" });
    const records = fc.array(fc.oneof(usage, title, untitledCompaction), { maxLength: 40 });
    fc.assert(
      fc.property(records, fc.nat(40), (all, cut) => {
        const split = Math.min(cut, all.length);
        assert.deepEqual(foldMetadata(all.slice(split), foldMetadata(all.slice(0, split))), foldMetadata(all));
      }),
      { numRuns: fuzzRuns(200) },
    );
    assert.deepEqual(foldMetadata([]), NO_METADATA);
    assert.equal(foldMetadata([{ v: 1, type: "compaction", session_id: session, at, turn_id: "t", summary: "s" }]).titled, false, "a compaction without a title is no title");
  });
});
