import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { cutWithMarker, displayText, escapedBytes, headWithin, tailWithin } from "../src/cards/bounds.ts";
import { boundedDiff, emptyCard, fitCard, preparedCard, runningCard } from "../src/cards/card.ts";
import { DetailBudget } from "../src/cards/bounds.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { unifiedDiff } from "../src/cards/diff.ts";
import { MCP_ARGUMENTS_BYTES, preparedMcp } from "../src/cards/mcp.ts";
import { resultKind } from "../src/mcp/call-result.ts";
import { CARD_LIMITS, type Card, CardSchema } from "../src/protocol/tool-cards.ts";
import * as v from "valibot";
import { fuzzRuns } from "./support/fuzz-runs.ts";

/** Applies unified diff `patch` to `before`, as `patch` would (hunks in order, context checked). */
function applyPatch(before: string, patch: string): string {
  const old = before.split(/(?<=\n)/u).filter((line) => line !== "");
  const out: string[] = [];
  let at = 0;
  const lines = patch.split(/(?<=\n)/u).slice(2);
  for (let index = 0; index < lines.length; index++) {
    const header = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n$/u.exec(lines[index]!);
    if (header !== null) {
      const start = Number(header[1]) - (header[2] === "0" ? 0 : 1);
      while (at < start) out.push(old[at++]!);
      continue;
    }
    const line = lines[index]!;
    const noNewline = lines[index + 1] === "\\ No newline at end of file\n";
    const text = noNewline ? line.slice(1, -1) : line.slice(1);
    if (noNewline) index++;
    if (line[0] === " " || line[0] === "-") {
      assert.equal(old[at], text, "context and removals match the old text");
      at++;
    }
    if (line[0] === " " || line[0] === "+") out.push(text);
  }
  while (at < old.length) out.push(old[at++]!);
  return out.join("");
}

const textOfLines = fc.array(fc.constantFrom("a\n", "b\n", "c\n", "d\n", "e", "x y\n"), { maxLength: 40 }).map((lines) => lines.join(""));

describe("unifiedDiff()", () => {
  it("unifiedDiff() writes diff -u hunks with three lines of context, /dev/null for a created file and the no-newline marker", () => {
    assert.equal(unifiedDiff("f", null, "a\nb"), "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n");
    const before = Array.from({ length: 20 }, (_, index) => `${index}\n`).join("");
    const after = before.replace("2\n", "two\n").replace("17\n", "seventeen\n");
    assert.equal(
      unifiedDiff("f", before, after),
      "--- a/f\n+++ b/f\n@@ -1,6 +1,6 @@\n 0\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -15,6 +15,6 @@\n 14\n 15\n 16\n-17\n+seventeen\n 18\n 19\n",
    );
    assert.equal(unifiedDiff("f", "same\n", "same\n"), "");
  });

  it("unifiedDiff() applied as a patch turns any text into the other (fast-check)", () => {
    fc.assert(fc.property(textOfLines, textOfLines, (before, after) => {
      const patch = unifiedDiff("f", before, after);
      assert.equal(patch === "" ? before : applyPatch(before, patch), after);
    }), { numRuns: fuzzRuns(300) });
  });
});

describe("card bounds", () => {
  const text = fc.string({ unit: fc.constantFrom("a", "é", "😀", "\u0001", '"', "\n", "\u202E"), maxLength: 3_000 });

  it("headWithin() and tailWithin() keep a prefix and a suffix within the escaped bound (fast-check)", () => {
    fc.assert(fc.property(text, fc.integer({ min: 0, max: 4_000 }), (value, max) => {
      const head = headWithin(value, max);
      const tail = tailWithin(value, max);
      assert.ok(value.startsWith(head) && escapedBytes(head) <= max);
      assert.ok(value.endsWith(tail) && escapedBytes(tail) <= max);
      if (escapedBytes(value) <= max) assert.deepEqual([head, tail], [value, value]);
    }), { numRuns: fuzzRuns(300) });
  });

  it("cutWithMarker() fits its bound, marker included, and says what it kept", () => {
    const cut = cutWithMarker("x".repeat(100), 50, (shown, total) => `[${shown}/${total}]`);
    // Room is reserved for the widest count, so the head may be a byte short of the bound.
    assert.deepEqual(cut, { text: `${"x".repeat(41)}[41/100]`, cut: true });
    assert.deepEqual(cutWithMarker("short", 50, () => "[cut]"), { text: "short", cut: false });
  });

  it("displayText() redacts secrets and escapes invisible characters but keeps line breaks and tabs", () => {
    assert.equal(displayText("key=sk-secret-value-123\n\tx\u202Ey", ["sk-secret-value-123"]), "key=[redacted]\n\tx\\u{202E}y");
  });

  it("boundedDiff() cuts a long diff to diff_bytes with its marker and counts the whole diff", () => {
    const after = "z".repeat(20_000);
    const diff = boundedDiff("big", null, after, [])!;
    assert.equal(diff.truncated, true);
    assert.equal(diff.total_bytes, "--- /dev/null\n+++ b/big\n@@ -0,0 +1 @@\n+".length + 20_000 + "\n\\ No newline at end of file\n".length);
    assert.ok(escapedBytes(diff.text) <= CARD_LIMITS.diff_bytes);
    assert.match(diff.text, /\n\[… diff truncated: \d+ of \d+ bytes shown …\]$/u);
  });

  it("boundedDiff() redacts a credential at the start of a removed or added line, where the line's sign would hide it from redaction", () => {
    const key = "AKIAIOSFODNN7EXAMPLE";
    const token = "ghp_0123456789abcdefABCDEF";
    const url = "https://deploy:hunter2hunter2@example.com/repo.git";
    const diff = boundedDiff("creds.txt", `${key}\n${token}\nkeep\n`, `keep\n${url}\n`, [])!;
    for (const secret of [key, token, "hunter2hunter2"]) assert.ok(!diff.text.includes(secret), `${secret} leaks through the diff`);
    assert.equal(diff.text, "--- a/creds.txt\n+++ b/creds.txt\n@@ -1,3 +1,2 @@\n-[redacted]\n-[redacted]\n keep\n+https://deploy:[redacted]@example.com/repo.git\n");
  });

  it("preparedCard() shows a path and a command redacted and escaped, and a diff over the run's budget as detail_omitted", async () => {
    const fs = new MemoryFileSystem();
    const secret = "sk-live-0123456789abcdef";
    const read = await preparedCard(emptyCard("read_file", "read"), { kind: "read", path: `keys/${secret}\u202E.txt` }, fs, [secret], new DetailBudget(0));
    assert.equal(read.path, "keys/[redacted]\\u{202E}.txt");
    const shell = await preparedCard(emptyCard("shell", "shell"), { kind: "shell", command: `curl -H ${secret} x`, timeoutS: 5, outputSoFar: () => null }, fs, [secret], new DetailBudget(0));
    assert.equal(shell.shell?.command, "curl -H [redacted] x");
    const edit = { kind: "edit" as const, path: "a.txt", before: "a\n", after: "b\n", bytesBefore: 2, bytesAfter: 2, replacements: 1 };
    const spent = await preparedCard(emptyCard("edit_file", "edit"), edit, fs, [], new DetailBudget(10));
    assert.deepEqual([spent.diff, spent.detail_omitted, spent.write?.mode], [null, true, "edit"]);
    const kept = await preparedCard(emptyCard("edit_file", "edit"), edit, fs, [], new DetailBudget(1_000));
    assert.deepEqual([kept.diff?.text, kept.detail_omitted], ["--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n", false]);
  });

  it("fitCard() cutting an already cut diff keeps one marker, naming the whole diff's size", () => {
    // A long escaped path fills the card twice (the card's path, the diff's headers), so the diff is cut again.
    const path = "\\u{200B}".repeat(1_000);
    const diff = boundedDiff(path, null, "x\n".repeat(10_000), [])!;
    const card = fitCard({ ...emptyCard("write_file", "write"), path, summary: `write_file ${path.slice(0, 1_000)}`, diff });
    assert.ok(Buffer.byteLength(JSON.stringify(card)) <= CARD_LIMITS.card_bytes);
    assert.ok(escapedBytes(card.diff!.text) < escapedBytes(diff.text), "the diff was cut again");
    assert.equal(card.diff!.text.split("[… diff truncated").length, 2, "one marker");
    const marker = /\n\[… diff truncated: (\d+) of (\d+) bytes shown …\]$/u.exec(card.diff!.text)!;
    assert.equal(Number(marker[2]), diff.total_bytes);
    assert.equal(Number(marker[1]), Buffer.byteLength(card.diff!.text.slice(0, marker.index)));
    fc.assert(fc.property(fc.integer({ min: 1, max: 8_000 }), (over) => {
      const recut = fitCard({ ...emptyCard("write_file", "write"), summary: "s".repeat(CARD_LIMITS.card_bytes - 8_600 + over), diff });
      assert.equal(recut.diff!.text.split("[… diff truncated").length, 2, "one marker");
      assert.match(recut.diff!.text, new RegExp(`\\n\\[… diff truncated: \\d+ of ${diff.total_bytes} bytes shown …\\]$`, "u"));
    }), { numRuns: fuzzRuns(40) });
  });

  it("preparedMcp() previews long arguments cut to 1,024 escaped bytes with …, counting the whole; resultKind() names what came back", () => {
    const mcp = preparedMcp({ kind: "mcp", server: "srv", tool: "t", arguments: { text: "\u0000".repeat(1_000) } }, []);
    assert.equal(mcp.arguments_truncated, true);
    assert.ok(escapedBytes(mcp.arguments) <= MCP_ARGUMENTS_BYTES && mcp.arguments.endsWith("…"));
    assert.equal(mcp.arguments_bytes, Buffer.byteLength(JSON.stringify({ text: "\u0000".repeat(1_000) })));
    const text = { type: "text" as const, text: "x" };
    const image = { type: "image" as const, data: "", mimeType: "image/png" };
    const kinds = [
      resultKind({ kind: "result", result: { content: [text, text] } }),
      resultKind({ kind: "result", result: { content: [text, image] } }),
      resultKind({ kind: "result", result: { content: [], structuredContent: { a: 1 } } }),
      resultKind({ kind: "result", result: { content: [] } }),
      resultKind({ kind: "result", result: { content: [text], isError: true } }),
      resultKind({ kind: "timeout" }),
    ];
    assert.deepEqual(kinds, ["text", "mixed", "structured", "empty", "error", "none"]);
  });

  it("runningCard() shows a running command's output up to its last line break: a credential still being written shows no prefix", () => {
    const card = { ...emptyCard("shell", "shell"), shell: { command: "x", cwd: ".", timeout_s: 5, exit_code: null, signal: null, ending: null, duration_ms: null, output: null } };
    // The pipe has delivered part of a token: too short yet for the redaction rules to know it.
    const early = runningCard(card, { head: "line one\ntoken: ghp_0123456", tail: "", totalBytes: 27, omittedBytes: 0 }, []);
    assert.deepEqual(early.shell!.output, { head: "line one\n", tail: "", total_bytes: 27, omitted_bytes: 18 });
    const late = runningCard(card, { head: "start\n", tail: "end\nghp_01", totalBytes: 100_000, omittedBytes: 99_900 }, []);
    assert.deepEqual([late.shell!.output!.head, late.shell!.output!.tail], ["start\n", "end\n"]);
  });

  it("fitCard() keeps every card within card_bytes, valid, cutting only its texts (fast-check over sizes)", () => {
    const big = (max: number) => fc.string({ unit: fc.constantFrom("a", "\u0000", "€", "\n"), maxLength: max });
    fc.assert(fc.property(big(9_000), big(3_000), big(3_000), big(33_000), big(4_096), (diff, head, tail, command, path) => {
      const card: Card = {
        ...emptyCard("shell", "shell"),
        path,
        diff: { text: diff, truncated: false, total_bytes: diff.length },
        shell: {
          command,
          cwd: ".",
          timeout_s: 120,
          exit_code: 0,
          signal: null,
          ending: "exit",
          duration_ms: 5,
          output: { head, tail, total_bytes: 10_000_000, omitted_bytes: 10_000_000 - head.length - tail.length },
        },
      };
      const fitted = fitCard(card);
      assert.ok(Buffer.byteLength(JSON.stringify(fitted)) <= CARD_LIMITS.card_bytes);
      assert.ok(v.is(CardSchema, fitted));
      const { diff: _, shell: __, path: ___, ...core } = fitted;
      const { diff: _d, shell: _s, path: _p, ...original } = card;
      assert.deepEqual(core, original);
      assert.equal(fitted.shell!.output!.total_bytes, 10_000_000);
    }), { numRuns: fuzzRuns(60) });
  });
});
