/**
 * `withDiffs()` (src/rewind/preview-diffs.ts): which preview files get a
 * diff, and that a preview's diffs stay within `preview_diff_bytes` and the
 * response frame whatever the files (fast-check).
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { escapedBytes } from "../src/cards/bounds.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { REWIND_LIMITS } from "../src/protocol/rewind-schemas.ts";
import type { PreviewedFile } from "../src/rewind/file-restore.ts";
import { withDiffs, withoutDiffs } from "../src/rewind/preview-diffs.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const restorable = (path: string, before: Uint8Array | null, now: Uint8Array): PreviewedFile => ({ change: { path, created: before === null, state: "restorable" }, before, now });

describe("withDiffs()", () => {
  it("withDiffs() gives no diff, and marks none omitted, to a changed file, a file that is not UTF-8 and a restore that changes nothing", () => {
    const files: PreviewedFile[] = [
      { change: { path: "changed.txt", created: false, state: "changed" }, before: bytes("a\n"), now: null },
      restorable("binary.bin", bytes("a\n"), new Uint8Array([0xff, 0xfe])),
      restorable("same.txt", bytes("same\n"), bytes("same\n")),
    ];
    assert.deepEqual(withDiffs(files, [], {}).map((file) => [file.diff, file.diff_omitted]), [[null, false], [null, false], [null, false]]);
  });

  it("withDiffs() leaves out, marked diff_omitted, every diff the response frame has no room for beside the rest of the result", () => {
    const files = [restorable("a.txt", bytes("old\n"), bytes("new\n"))];
    const bare = { padding: "x".repeat(LIMITS.output_frame_bytes - 600) };
    assert.deepEqual(withDiffs(files, [], bare).map((file) => [file.diff, file.diff_omitted]), [[null, true]]);
  });

  it("withDiffs() keeps each diff within diff_bytes and all of them within preview_diff_bytes and the frame, for any files", () => {
    const file = fc.record({ before: fc.option(fc.string({ maxLength: 3_000 }), { nil: null }), now: fc.string({ maxLength: 3_000 }), lines: fc.integer({ min: 1, max: 8 }) });
    fc.assert(fc.property(fc.array(file, { maxLength: 40 }), (specs) => {
      const files = specs.map((spec, index) => restorable(`f${index}.txt`, spec.before === null ? null : bytes(spec.before.repeat(spec.lines)), bytes(`${spec.now}\n`.repeat(spec.lines))));
      const bare = { files: withoutDiffs(files) };
      const shown = withDiffs(files, [], bare);
      let total = 0;
      for (const entry of shown) {
        if (entry.diff === null) continue;
        assert.ok(escapedBytes(entry.diff.text) <= REWIND_LIMITS.diff_bytes);
        total += escapedBytes(entry.diff.text);
      }
      assert.ok(total <= REWIND_LIMITS.preview_diff_bytes);
      assert.ok(bytes(JSON.stringify({ ...bare, files: shown })).length <= LIMITS.output_frame_bytes - 512);
    }), { numRuns: fuzzRuns(50) });
  });
});
