import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  boundaryFrameLength,
  chunking,
  identifier,
  invalidFrameFor,
  type InvalidFrame,
  request,
  splitAt,
  validRequest,
  validStream,
} from "../src/fuzz/mod.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import type { Frame } from "./support/harness.ts";
import { startTapped } from "./support/wire.ts";
import { concatBytes } from "./support/records.ts";
import { withoutChildScope } from "./support/child-scope.ts";

const encoder = new TextEncoder();
const LIMIT = LIMITS.input_frame_bytes;
const CR = 0x0d;
const LF = 0x0a;
const ENVELOPE = `"protocol":"magi-code.local-agent","version":1`;

/** A fixed id that the kit's random identifiers are vanishingly unlikely to produce. */
const PRE_INIT_ID = "pre-initialize-0";


function statusLine(id: string): string {
  return `${JSON.stringify(request(id, "status"))}\n`;
}

/** What a test compares: the error code, or the `state` of a result. */
function outcome(frame: Frame): [string | null | undefined, string] {
  return [frame.id, frame.error?.code ?? `result:${String(frame.result?.state)}`];
}

interface Served {
  readonly code: number;
  /** Frames after the pre-initialization response, if any. */
  readonly frames: Frame[];
  readonly inputClosed: boolean;
}

/**
 * Serves `chunks` (each one read) on a fresh memory runtime, then EOF. With
 * `preInit`, the server is initialized first and its response awaited, so
 * nothing after depends on startup timing: status is `idle`, a second
 * initialize is `already_initialized`, and every answer is synchronous and in
 * input order.
 */
async function serve(chunks: readonly Uint8Array[], preInit: boolean): Promise<Served> {
  const server = startTapped();
  let skip = 0;
  if (preInit) {
    server.push(`${JSON.stringify(request(PRE_INIT_ID, "initialize", { required_capabilities: ["status"] }))}\n`);
    const [ready] = await server.waitFrames(1);
    assert.equal(ready?.id, PRE_INIT_ID);
    assert.equal((ready?.result?.status as { readiness?: string } | undefined)?.readiness, "ready");
    skip = 1;
  }
  for (const chunk of chunks) server.push(chunk);
  server.runtime.input.end();
  const code = await server.exit;
  return { code, frames: server.frames.slice(skip), inputClosed: server.runtime.input.closed };
}

/** Offsets (1 … length-1) that cut a UTF-8 sequence or separate a CR from its LF. */
function interestingCuts(bytes: Uint8Array): number[] {
  const cuts: number[] = [];
  for (let i = 1; i < bytes.length; i++) {
    const insideSequence = (bytes[i]! & 0xc0) === 0x80;
    const betweenCrLf = bytes[i - 1] === CR && bytes[i] === LF;
    if (insideSequence || betweenCrLf) cuts.push(i);
  }
  return cuts;
}

/**
 * The kit's chunking() (uniform cuts) plus at least one forced cut inside a
 * UTF-8 sequence or between CR and LF when the bytes have such a spot.
 */
function chunkingWithInterestingCuts(bytes: Uint8Array): fc.Arbitrary<Uint8Array[]> {
  const interesting = interestingCuts(bytes);
  return fc
    .tuple(chunking(bytes), fc.subarray(interesting, { minLength: Math.min(1, interesting.length) }))
    .map(([chunks, forced]) => {
      const cuts: number[] = [...forced];
      let offset = 0;
      for (const chunk of chunks.slice(0, -1)) cuts.push((offset += chunk.length));
      return splitAt(bytes, cuts);
    });
}

/** Counts which kinds of cut the generated chunkings contained, to prove they were exercised. */
function cutKinds(bytes: Uint8Array, chunks: readonly Uint8Array[], counts: { utf8: number; crlf: number }): void {
  let offset = 0;
  for (const chunk of chunks.slice(0, -1)) {
    offset += chunk.length;
    if ((bytes[offset]! & 0xc0) === 0x80) counts.utf8++;
    if (bytes[offset - 1] === CR && bytes[offset] === LF) counts.crlf++;
  }
}

/** Text with at least one 2-, 3- or 4-byte UTF-8 character, as well-formed UTF-16 (no lone surrogates). */
const multibyteText = fc
  .tuple(
    fc.constantFrom("é", "\u07ff", "\u0800", "€", "\ufeff", "\u2028", "😀", "𝄞", "\u{10ffff}"),
    fc.string({ unit: "binary", maxLength: 6 }),
    fc.constantFrom("ß", "ह", "\uffff", "🦀"),
  )
  .map(([a, b, c]) => new TextDecoder().decode(encoder.encode(a + b + c)));

/** Well-formed frames that carry multibyte text where it is legal JSON, each with its expected answer. */
const multibyteFrame = fc.tuple(
  fc.constantFrom<[string, (id: string, text: string) => string]>(
    ["invalid_params", (id, t) => `{${ENVELOPE},"id":"${id}","method":"status","params":{"note":${JSON.stringify(t)}}}`],
    ["invalid_params", (id, t) => `{${ENVELOPE},"id":"${id}","method":"status","params":{${JSON.stringify(t)}:1}}`],
    [
      "invalid_params",
      (id, t) => `{${ENVELOPE},"id":"${id}","method":"initialize","params":{"required_capabilities":[${JSON.stringify(t)}]}}`,
    ],
    ["invalid_request", (id, t) => `{${ENVELOPE},"id":"${id}","method":"status","params":{},"ñ":${JSON.stringify(t)}}`],
    ["invalid_request", (id, t) => `{${ENVELOPE},"id":"${id}","method":${JSON.stringify(t)},"params":{}}`],
  ),
  multibyteText,
  fc.boolean(),
);

interface Line {
  readonly text: Uint8Array;
  /** The expected answer as {@link outcome} renders it. */
  readonly expected: [string | null, string];
}

/** The lines of a validStream() value: raw text (CR and LF included), id and method. */
function linesOf(stream: Uint8Array): { raw: string; id: string; method: string }[] {
  return new TextDecoder().decode(stream).split(/(?<=\n)/).map((raw) => {
    const parsed = JSON.parse(raw) as { id: string; method: string };
    return { raw, id: parsed.id, method: parsed.method };
  });
}

/** validStream() with multibyte invalid-but-well-formed frames spliced in, and every expected answer. */
const mixedMultibyteStream = fc
  .tuple(validStream(12), fc.array(fc.tuple(multibyteFrame, fc.nat()), { minLength: 1, maxLength: 6 }))
  .map(([stream, extras]) => {
    const lines: Line[] = linesOf(stream).map(({ raw, id, method }) => ({
      text: encoder.encode(raw),
      expected: [id, method === "status" ? "result:idle" : "already_initialized"],
    }));
    const ids = new Set(lines.map((line) => line.expected[0]));
    extras.forEach(([[[code, build], text, cr], position], index) => {
      const id = `multibyte-${String(index).padStart(6, "0")}`;
      assert.ok(!ids.has(id));
      const line: Line = { text: encoder.encode(`${build(id, text)}${cr ? "\r" : ""}\n`), expected: [id, code] };
      lines.splice(position % (lines.length + 1), 0, line);
    });
    return { bytes: concatBytes(lines.map((line) => line.text)), expected: lines.map((line) => line.expected) };
  });

describe("framing: split invariance", () => {
  it("server answers any chunking of a valid stream identically", async () => {
    const counts = { utf8: 0, crlf: 0 };
    await fc.assert(
      fc.asyncProperty(
        mixedMultibyteStream.chain((stream) => fc.tuple(fc.constant(stream), chunkingWithInterestingCuts(stream.bytes))),
        async ([{ bytes, expected }, chunks]) => {
          assert.deepEqual(concatBytes(chunks), bytes);
          cutKinds(bytes, chunks, counts);
          const whole = await serve([bytes], true);
          const split = await serve(chunks, true);
          assert.equal(whole.code, 0);
          assert.equal(split.code, 0);
          assert.deepEqual(whole.frames.map(outcome), expected);
          assert.deepEqual(withoutChildScope(split.frames), withoutChildScope(whole.frames));
        },
      ),
      { numRuns: fuzzRuns(150, 2) },
    );
    assert.ok(counts.utf8 > 0, "some chunkings cut inside a UTF-8 sequence");
    assert.ok(counts.crlf > 0, "some chunkings cut between CR and LF");
  });

  it("server answers any chunking of a stream mixing invalid frames with each frame's labelled code", async () => {
    type Item = { kind: "invalid"; id: string; frame: InvalidFrame; cr: boolean } | {
      kind: "valid";
      id: string;
      method: string;
      text: string;
      cr: boolean;
    };
    const item = (id: string): fc.Arbitrary<Item> =>
      fc.oneof(
        fc.tuple(invalidFrameFor(id), fc.boolean()).map(([frame, cr]): Item => ({ kind: "invalid", id, frame, cr })),
        fc.tuple(validRequest(fc.constant(id)), fc.boolean()).map(([value, cr]): Item => ({
          kind: "valid",
          id,
          method: value.method,
          text: JSON.stringify(value),
          cr,
        })),
      );
    const stream = fc
      .uniqueArray(identifier(), { minLength: 1, maxLength: 16 })
      .chain((ids) => fc.tuple(...ids.map(item)))
      .map((items) => ({
        items,
        bytes: concatBytes(items.flatMap((entry) => [entry.kind === "invalid" ? entry.frame.bytes : entry.text, entry.cr ? "\r\n" : "\n"])),
      }));
    const labels = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        stream.chain((s) => fc.tuple(fc.constant(s), chunkingWithInterestingCuts(s.bytes))),
        async ([{ items, bytes }, chunks]) => {
          const whole = await serve([bytes], true);
          const split = await serve(chunks, true);
          assert.equal(whole.code, 0);
          assert.equal(whole.frames.length, items.length, "one response per frame");
          items.forEach((entry, index) => {
            const frame = whole.frames[index]!;
            if (entry.kind === "valid") {
              assert.deepEqual(outcome(frame), [entry.id, entry.method === "status" ? "result:idle" : "already_initialized"]);
              return;
            }
            const { label, code } = entry.frame;
            labels.add(label);
            assert.equal(frame.error?.code, code, `${label} answers ${code}`);
            assert.ok(frame.id === null || frame.id === entry.id, `${label} answers with its id or null`);
            if (code === "invalid_params" || code === "unsupported_method") {
              assert.equal(frame.id, entry.id, `${label} passed the envelope, so it keeps its id`);
            }
          });
          assert.equal(split.code, 0);
          assert.deepEqual(withoutChildScope(split.frames), withoutChildScope(whole.frames));
        },
      ),
      { numRuns: fuzzRuns(150, 3) },
    );
    assert.ok(labels.size >= 20, `most invalid-frame labels were exercised (${labels.size})`);
  });
});

describe("framing: params must be an object", () => {
  // valibot's object schemas accept arrays; exactObject() refuses them.
  it("server answers status and shutdown with params [] with invalid_params", async () => {
    const frames = ["status", "shutdown"].map((method) => `{${ENVELOPE},"id":"${method}","method":"${method}","params":[]}\n`);
    const served = await serve([encoder.encode(frames.join(""))], false);
    assert.deepEqual(served.frames.map(outcome), [["status", "invalid_params"], ["shutdown", "invalid_params"]]);
  });
});

/** A valid `status` request of exactly `length` bytes, padded inside the object with JSON whitespace (CR included). */
function paddedStatus(id: string, length: number, lastByteCr = false): Uint8Array {
  const head = `{${ENVELOPE},"id":"${id}","method":"status","params":{}`;
  const tail = lastByteCr ? "}\r" : "}";
  const pad = length - head.length - tail.length;
  assert.ok(pad >= 0);
  const whitespace = " \t\r".repeat(Math.ceil(pad / 3)).slice(0, pad);
  const bytes = encoder.encode(head + whitespace + tail);
  assert.equal(bytes.length, length);
  return bytes;
}

/**
 * A well-formed `status` frame with one string in params (so the answer is
 * `invalid_params`) holding `char`, which starts at byte index `charStart`;
 * the frame ends `"}}` right after it.
 */
function multibyteStatus(id: string, char: string, charStart: number): { bytes: Uint8Array; width: number } {
  const head = `{${ENVELOPE},"id":"${id}","method":"status","params":{"s":"`;
  const filler = charStart - head.length;
  assert.ok(filler >= 0);
  const bytes = encoder.encode(`${head}${"a".repeat(filler)}${char}"}}`);
  const width = encoder.encode(char).length;
  assert.equal(bytes.length, charStart + width + 3);
  return { bytes, width };
}

/** The lengths boundaryFrameLength() draws from, tested exhaustively here. */
const BOUNDARY_LENGTHS = [LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2];
const MULTIBYTE = [["2-byte", "é"], ["3-byte", "€"], ["4-byte", "😀"]] as const;

interface BoundaryCase {
  readonly name: string;
  /** Frame bytes including CR but excluding LF. */
  readonly frame: Uint8Array;
  /** Extra split offsets (into frame + LF) beyond the ones around the bound. */
  readonly cuts: readonly number[];
  /** The answer expected for a frame within the bound. */
  readonly inBound: string;
}

async function checkBoundary(c: BoundaryCase): Promise<number> {
  const frame = concatBytes([c.frame, "\n"]);
  const oversize = c.frame.length > LIMIT;
  // A later frame that would visibly execute: a shutdown after an oversize frame must never answer.
  const later = oversize ? `${JSON.stringify(request("after", "shutdown"))}\n` : statusLine("after");
  const stream = concatBytes([frame, later]);
  const offsets = new Set([LIMIT - 2, LIMIT - 1, LIMIT, LIMIT + 1, LIMIT + 2, c.frame.length, ...c.cuts]);
  const splits: Uint8Array[][] = [[stream], splitAt(stream, [...offsets])];
  for (const offset of offsets) if (offset > 0 && offset < stream.length) splits.push(splitAt(stream, [offset]));
  for (const chunks of splits) {
    const where = `${c.name}, split at ${chunks.slice(0, -1).map((chunk) => chunk.length).join("+") || "nothing"}`;
    const served = await serve(chunks, false);
    assert.equal(served.code, 0, where);
    if (oversize) {
      assert.deepEqual(served.frames.map(outcome), [[null, "frame_too_large"]], where);
      assert.equal(served.inputClosed, true, where);
    } else {
      assert.deepEqual(served.frames.map(outcome), [["big", c.inBound], ["after", "not_initialized"]], where);
    }
  }
  return splits.length;
}

describe("framing: the 65,536-byte input bound", () => {
  it("server serves whitespace-padded frames up to 65,536 bytes and closes with frame_too_large from 65,537, for every split", async () => {
    for (const length of BOUNDARY_LENGTHS) {
      for (const lastByteCr of [false, true]) {
        await checkBoundary({
          name: `${length} bytes${lastByteCr ? " ending in CR" : ""}`,
          frame: paddedStatus("big", length, lastByteCr),
          cuts: [length - 1],
          inBound: "not_initialized",
        });
      }
    }
  });

  it("server counts a multibyte character at the bound by bytes, for every split inside it", async () => {
    for (const length of BOUNDARY_LENGTHS) {
      for (const [name, char] of MULTIBYTE) {
        const width = encoder.encode(char).length;
        const start = length - 3 - width;
        const { bytes } = multibyteStatus("big", char, start);
        assert.equal(bytes.length, length);
        await checkBoundary({
          name: `${length} bytes ending in a ${name} character`,
          frame: bytes,
          cuts: Array.from({ length: width + 1 }, (_, i) => start + i),
          inBound: "invalid_params",
        });
      }
    }
  });

  it("server rejects a frame whose multibyte character straddles bytes 65,536 and 65,537, for every split inside it", async () => {
    for (const [name, char] of MULTIBYTE) {
      const width = encoder.encode(char).length;
      // Byte 65,536 is index LIMIT-1: start the character so it covers LIMIT-1 and LIMIT.
      for (let before = 1; before < width; before++) {
        const start = LIMIT - before;
        const { bytes } = multibyteStatus("big", char, start);
        await checkBoundary({
          name: `${name} character with ${before} of ${width} bytes within the bound`,
          frame: bytes,
          cuts: Array.from({ length: width + 1 }, (_, i) => start + i),
          inBound: "invalid_params",
        });
      }
    }
  });

  it("server rejects a 65,536-byte frame followed by CR and LF (the CR is byte 65,537)", async () => {
    const frame = concatBytes([paddedStatus("big", LIMIT), "\r"]);
    assert.equal(frame.length, LIMIT + 1);
    await checkBoundary({ name: "65,536 bytes + CR", frame, cuts: [LIMIT, LIMIT + 1], inBound: "not_initialized" });
  });

  it("server answers EOF after 65,536 unterminated bytes with incomplete_frame, and after 65,537 with frame_too_large", async () => {
    const exact = paddedStatus("big", LIMIT);
    const atBound = await serve(splitAt(exact, [LIMIT - 1]), false);
    assert.equal(atBound.code, 0);
    assert.deepEqual(atBound.frames.map(outcome), [[null, "incomplete_frame"]]);
    const over = await serve(splitAt(paddedStatus("big", LIMIT + 1), [LIMIT]), false);
    assert.equal(over.code, 0);
    assert.deepEqual(over.frames.map(outcome), [[null, "frame_too_large"]]);
  });

  it("server answers a random boundary-length frame under a random chunking the same as whole", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(boundaryFrameLength(), fc.boolean()).chain(([length, cr]) => {
          const stream = concatBytes([paddedStatus("big", length, cr), "\n", statusLine("after")]);
          return fc.tuple(fc.constant({ length, stream }), chunking(stream, 8));
        }),
        async ([{ length, stream }, chunks]) => {
          const whole = await serve([stream], false);
          const split = await serve(chunks, false);
          const expected = length > LIMIT ? [[null, "frame_too_large"]] : [["big", "not_initialized"], ["after", "not_initialized"]];
          assert.deepEqual(whole.frames.map(outcome), expected);
          assert.deepEqual(withoutChildScope(split.frames), withoutChildScope(whole.frames));
          assert.equal(split.code, 0);
        },
      ),
      { numRuns: fuzzRuns(40, 10) },
    );
  });
});

type Container = "array" | "object";

/** `kinds.length` nested containers as JSON text (a bare `0` for none) (`[[…]]`, `{"a":{"a":…{}}}` or a given mix). */
function nestedValue(kinds: readonly Container[]): string {
  if (kinds.length === 0) return "0";
  let open = "";
  let close = "";
  kinds.forEach((kind, index) => {
    const last = index === kinds.length - 1;
    open += kind === "array" ? "[" : last ? "{" : `{"a":`;
    close = (kind === "array" ? "]" : "}") + close;
  });
  return open + close;
}

/** A status request whose params hold `kinds` below its "x" field: total depth = kinds.length + 2. */
function deepInParams(id: string, kinds: readonly Container[]): string {
  return `{${ENVELOPE},"id":"${id}","method":"status","params":{"x":${nestedValue(kinds)}}}`;
}

describe("framing: JSON depth through the server", () => {
  const shapes: [string, (depth: number) => Container[]][] = [
    ["arrays", (depth) => Array(depth).fill("array")],
    ["objects", (depth) => Array(depth).fill("object")],
    ["mixed", (depth) => Array.from({ length: depth }, (_, i) => (i % 2 === 0 ? "array" : "object"))],
  ];

  for (const [shape, kinds] of shapes) {
    it(`server accepts 31 and 32 levels and answers invalid_frame at 33 and 34 (${shape} in params)`, async () => {
      const lines = [31, 32, 33, 34].map((depth) => `${deepInParams(`d${depth}`, kinds(depth - 2))}\n`);
      // Reusing each id afterwards shows whether the rejected frame's id was recorded.
      const reuse = [31, 32, 33, 34].map((depth) => statusLine(`d${depth}`));
      const served = await serve([encoder.encode(lines.join("") + reuse.join(""))], false);
      assert.equal(served.code, 0);
      assert.deepEqual(served.frames.map(outcome), [
        ["d31", "invalid_params"],
        ["d32", "invalid_params"],
        [null, "invalid_frame"],
        [null, "invalid_frame"],
        ["d31", "duplicate_id"],
        ["d32", "duplicate_id"],
        ["d33", "not_initialized"],
        ["d34", "not_initialized"],
      ]);
    });
  }

  it("server applies the depth bound to the whole frame, not only to params", async () => {
    const frames = [
      `{${ENVELOPE},"id":"e32","method":"status","params":{},"x":${nestedValue(Array(31).fill("array"))}}`,
      `{${ENVELOPE},"id":"e33","method":"status","params":{},"x":${nestedValue(Array(32).fill("array"))}}`,
      nestedValue(Array(32).fill("array")),
      nestedValue(Array(33).fill("array")),
    ];
    const served = await serve([encoder.encode(frames.map((f) => `${f}\n`).join(""))], false);
    assert.deepEqual(served.frames.map(outcome), [
      ["e32", "invalid_request"],
      [null, "invalid_frame"],
      [null, "invalid_request"],
      [null, "invalid_frame"],
    ]);
  });

  it("server answers any depth from 1 to 40 by the bound of 32, under any chunking", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Container>("array", "object"), { minLength: 0, maxLength: 38 }).chain((kinds) => {
          const bytes = encoder.encode(`${deepInParams("deep", kinds)}\n${statusLine("next")}`);
          return fc.tuple(fc.constant(kinds), chunking(bytes, 6));
        }),
        async ([kinds, chunks]) => {
          const served = await serve(chunks, false);
          const depth = kinds.length + 2;
          assert.deepEqual(served.frames.map(outcome), [
            depth <= LIMITS.json_depth ? ["deep", "invalid_params"] : [null, "invalid_frame"],
            ["next", "not_initialized"],
          ]);
        },
      ),
      { numRuns: fuzzRuns(200) },
    );
  });

  // That the parser stops at the bound (so these cost nothing) is proven by what it answers in
  // json.test.ts; the time they take is measured by bench/hostile-inputs.mjs, never asserted.
  it("server answers 32,000-deep frames within the byte bound with invalid_frame and stays usable", async () => {
    const frames = [
      deepInParams("deep", Array(32_000).fill("array")),
      "[".repeat(LIMIT - 1),
      `{"a":`.repeat(13_000),
      `{${ENVELOPE},"id":"deep2","method":"status","params":{"x":${`{"a":`.repeat(10_000)}1${"}".repeat(10_000)}}}`,
    ];
    for (const frame of frames) assert.ok(encoder.encode(frame).length <= LIMIT);
    const served = await serve([encoder.encode(frames.map((f) => `${f}\n`).join("") + statusLine("deep"))], false);
    assert.deepEqual(served.frames.map(outcome), [
      [null, "invalid_frame"],
      [null, "invalid_frame"],
      [null, "invalid_frame"],
      [null, "invalid_frame"],
      ["deep", "not_initialized"],
    ]);
  });

  it("server reports invalid UTF-8 in a too-deep frame as invalid_request", async () => {
    const deep = encoder.encode(deepInParams("x", Array(40).fill("array")));
    const frame = concatBytes([deep.subarray(0, deep.length - 2), new Uint8Array([0x22, 0xff, 0x22]), deep.subarray(deep.length - 2)]);
    const served = await serve([concatBytes([frame, "\n"])], false);
    assert.deepEqual(served.frames.map(outcome), [[null, "invalid_request"]]);
  });
});

describe("framing: duplicate keys through the server", () => {
  const cases: [string, string, [string | null, string], string][] = [
    // [name, frame, expected answer, what a later status with id "k" then answers]
    ["literal duplicate id", `{${ENVELOPE},"id":"k","id":"k","method":"status","params":{}}`, [null, "invalid_request"], "not_initialized"],
    ["escaped duplicate id", `{${ENVELOPE},"id":"k","\\u0069d":"k2","method":"status","params":{}}`, [null, "invalid_request"], "not_initialized"],
    ["escaped first id", `{${ENVELOPE},"\\u0069\\u0064":"k","id":"k","method":"status","params":{}}`, [null, "invalid_request"], "not_initialized"],
    [
      "duplicate id at the root with a duplicate inside params",
      `{${ENVELOPE},"id":"k","method":"initialize","params":{"required_capabilities":[],"required_capabilities":[]},"id":"k"}`,
      [null, "invalid_request"],
      "not_initialized",
    ],
    ["duplicate method", `{${ENVELOPE},"id":"k","method":"status","method":"status","params":{}}`, ["k", "invalid_request"], "duplicate_id"],
    ["escaped duplicate method", `{${ENVELOPE},"id":"k","method":"status","\\u006dethod":"shutdown","params":{}}`, ["k", "invalid_request"], "duplicate_id"],
    ["duplicate params", `{${ENVELOPE},"id":"k","method":"status","params":{},"params":{}}`, ["k", "invalid_request"], "duplicate_id"],
    [
      "duplicate protocol",
      `{${ENVELOPE},"id":"k","method":"status","params":{},"protocol":"magi-code.local-agent"}`,
      ["k", "invalid_request"],
      "duplicate_id",
    ],
    [
      "duplicate version",
      `{"version":1,${ENVELOPE},"id":"k","method":"status","params":{}}`,
      ["k", "invalid_request"],
      "duplicate_id",
    ],
    [
      "duplicate inside params",
      `{${ENVELOPE},"id":"k","method":"initialize","params":{"required_capabilities":[],"required_capabilities":[]}}`,
      ["k", "invalid_params"],
      "duplicate_id",
    ],
    [
      "escaped duplicate inside params",
      `{${ENVELOPE},"id":"k","method":"initialize","params":{"required_capabilities":["status"],"\\u0072equired_capabilities":["status"]}}`,
      ["k", "invalid_params"],
      "duplicate_id",
    ],
    [
      "duplicate method and duplicate inside params",
      `{${ENVELOPE},"id":"k","method":"initialize","params":{"required_capabilities":[],"required_capabilities":[]},"method":"initialize"}`,
      ["k", "invalid_request"],
      "duplicate_id",
    ],
    [
      "duplicate inside an unknown envelope field",
      `{${ENVELOPE},"id":"k","method":"status","params":{},"x":{"a":1,"a":1}}`,
      ["k", "invalid_request"],
      "duplicate_id",
    ],
  ];

  for (const [name, frame, expected, reuse] of cases) {
    const article = /^[aeiou]/.test(name) ? "an" : "a";
    it(`server answers a frame with ${article} ${name} with ${expected[1]} and id ${expected[0]}`, async () => {
      const served = await serve([encoder.encode(`${frame}\n${statusLine("k")}${statusLine("k2")}`)], false);
      assert.equal(served.code, 0);
      assert.deepEqual(served.frames.map(outcome), [expected, ["k", reuse], ["k2", "not_initialized"]]);
    });
  }

  it("server never starts initialization for an initialize with duplicate params keys", async () => {
    const server = startTapped();
    server.push(
      `{${ENVELOPE},"id":"i1","method":"initialize","params":{"required_capabilities":[],"\\u0072equired_capabilities":[]}}\n`,
    );
    await server.waitFrames(1);
    server.push(statusLine("s1"));
    const frames = await server.waitFrames(2);
    assert.deepEqual(frames.map(outcome), [["i1", "invalid_params"], ["s1", "not_initialized"]]);
    assert.equal(server.runtime.fs.exists("/home/user/.magi-code"), false);
    server.runtime.input.end();
    assert.equal(await server.exit, 0);
  });

  it(
    "server treats an id as unrecoverable when it is duplicated after another duplicated root key",
    async () => {
      const frame = `{${ENVELOPE},"method":"status","method":"status","id":"k","\\u0069d":"k2","params":{}}`;
      const served = await serve([encoder.encode(`${frame}\n${statusLine("k")}`)], false);
      assert.deepEqual(served.frames.map(outcome), [[null, "invalid_request"], ["k", "not_initialized"]]);
    },
  );
});

describe("framing: invalid UTF-8 through the server", () => {
  const sequences: [string, number[]][] = [
    ["overlong 2-byte slash", [0xc0, 0xaf]],
    ["overlong 2-byte NUL", [0xc1, 0x80]],
    ["overlong 3-byte slash", [0xe0, 0x80, 0xaf]],
    ["overlong 4-byte slash", [0xf0, 0x80, 0x80, 0xaf]],
    ["encoded high surrogate", [0xed, 0xa0, 0x80]],
    ["encoded low surrogate", [0xed, 0xbf, 0xbf]],
    ["CESU-8 surrogate pair", [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ["lone continuation 0x80", [0x80]],
    ["lone continuation 0xBF", [0xbf]],
    ["truncated 2-byte sequence", [0xc3]],
    ["truncated 3-byte sequence", [0xe2, 0x82]],
    ["truncated 4-byte sequence", [0xf0, 0x9f, 0x98]],
    ["code point above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
    ["lead byte 0xF5", [0xf5, 0x80, 0x80, 0x80]],
    ["byte 0xFE", [0xfe]],
    ["byte 0xFF", [0xff]],
  ];

  function frameWith(id: string, bad: readonly number[], where: "params" | "id" | "end"): Uint8Array {
    const before = `{${ENVELOPE},"id":"${id}","method":"status","params":{"s":"`;
    if (where === "end") return concatBytes([`{${ENVELOPE},"id":"${id}","method":"status","params":{}}`, new Uint8Array(bad)]);
    if (where === "id") return concatBytes([`{${ENVELOPE},"method":"status","params":{},"id":"${id}`, new Uint8Array(bad), `"}`]);
    return concatBytes([before, "x", new Uint8Array(bad), "y", `"}}`]);
  }

  for (const [name, bad] of sequences) {
    it(`server answers a frame containing ${name} with invalid_request and id null, and stays usable`, async () => {
      const stream = concatBytes([
        frameWith("u1", bad, "params"),
        "\n",
        frameWith("u2", bad, "end"),
        "\r\n",
        frameWith("u3", bad, "id"),
        "\n",
        statusLine("u1"),
        statusLine("u2"),
      ]);
      for (const chunks of [[stream], splitAt(stream, interestingCuts(stream))]) {
        const served = await serve(chunks, false);
        assert.equal(served.code, 0);
        assert.deepEqual(served.frames.map(outcome), [
          [null, "invalid_request"],
          [null, "invalid_request"],
          [null, "invalid_request"],
          ["u1", "not_initialized"],
          ["u2", "not_initialized"],
        ]);
      }
    });
  }

  it("server answers a frame starting with a UTF-8 BOM with invalid_request and id null, and stays usable", async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    const stream = concatBytes([bom, statusLine("b1"), statusLine("b1")]);
    for (let cut = 1; cut <= 3; cut++) {
      const served = await serve(splitAt(stream, [cut]), false);
      assert.deepEqual(served.frames.map(outcome), [[null, "invalid_request"], ["b1", "not_initialized"]]);
    }
  });

  it("server answers invalid UTF-8 anywhere in an otherwise valid request with invalid_request and id null", async () => {
    const valid = encoder.encode(statusLine("v1").trimEnd());
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(fc.constantFrom(...sequences.map(([, bad]) => bad)), fc.integer({ min: 0, max: valid.length }))
          .chain(([bad, at]) => {
            const stream = concatBytes([valid.subarray(0, at), new Uint8Array(bad), valid.subarray(at), "\n", statusLine("v1")]);
            return fc.tuple(fc.constant(stream), chunking(stream, 8));
          }),
        async ([, chunks]) => {
          const served = await serve(chunks, false);
          assert.equal(served.code, 0);
          assert.deepEqual(served.frames.map(outcome), [[null, "invalid_request"], ["v1", "not_initialized"]]);
        },
      ),
      { numRuns: fuzzRuns(200) },
    );
  });
});

describe("framing: EOF", () => {
  it("server answers EOF after a partial shutdown with incomplete_frame and never stops", async () => {
    const shutdown = encoder.encode(`${JSON.stringify(request("x1", "shutdown"))}\r`);
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(validStream(6), fc.integer({ min: 1, max: shutdown.length })).chain(([stream, length]) => {
          const bytes = concatBytes([stream, shutdown.subarray(0, length)]);
          return fc.tuple(fc.constant({ stream, bytes }), chunkingWithInterestingCuts(bytes));
        }),
        async ([{ stream, bytes }, chunks]) => {
          assert.deepEqual(concatBytes(chunks), bytes);
          const served = await serve(chunks, false);
          assert.equal(served.code, 0);
          const ids = new Set(linesOf(stream).map((line) => line.id));
          const incomplete = served.frames.filter((frame) => frame.error?.code === "incomplete_frame");
          assert.equal(incomplete.length, 1);
          assert.equal(incomplete[0]!.id, null);
          for (const frame of served.frames) {
            assert.notEqual(frame.result?.state, "stopping");
            assert.ok(frame.id === null || ids.has(frame.id!), "only the complete frames are answered");
          }
          // Every complete frame was answered once (a pending initialize is answered startup_cancelled at EOF).
          const answered = served.frames.filter((frame) => frame.id !== null).map((frame) => frame.id);
          assert.equal(answered.length, ids.size);
          assert.deepEqual(new Set(answered), ids);
        },
      ),
      { numRuns: fuzzRuns(150) },
    );
  });

  it("server answers a complete shutdown followed by a partial frame only with stopping", async () => {
    const served = await serve([encoder.encode(`${JSON.stringify(request("x1", "shutdown"))}\n{"prot`)], false);
    assert.equal(served.code, 0);
    assert.deepEqual(served.frames.map(outcome), [["x1", "result:stopping"]]);
  });
});
