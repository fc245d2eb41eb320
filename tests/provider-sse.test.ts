import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { chunking } from "../src/fuzz/mod.ts";
import { type ProviderEvent, StreamErrorCode } from "../src/runner/providers/events.ts";
import { MAX_EVENT_CHARS, type SseEvent, SseParser } from "../src/runner/providers/sse.ts";
import { decodeStream } from "../src/runner/providers/stream.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const encoder = new TextEncoder();

function parseAll(chunks: readonly Uint8Array[], max?: number): { events: SseEvent[]; partial: boolean; failure: string | null } {
  const parser = new SseParser(max);
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  const end = parser.finish();
  return { events: [...events, ...end.events], partial: end.partial, failure: parser.failure };
}

function parseText(text: string): SseEvent[] {
  return parseAll([encoder.encode(text)]).events;
}

/** A model event and how to write it: any names, any Unicode data lines, any line ending, comments mixed in. */
const modelEvent = fc.record({
  event: fc.option(fc.stringMatching(/^[a-z_.]{1,16}$/), { nil: undefined }),
  lines: fc.array(fc.string({ unit: "binary", maxLength: 24 }).map((s) => s.replace(/[\r\n]/g, "")), { minLength: 1, maxLength: 4 }),
  newline: fc.constantFrom("\n", "\r\n", "\r"),
  comment: fc.boolean(),
});

function serialize(events: readonly { event?: string | undefined; lines: string[]; newline: string; comment: boolean }[]): string {
  return events.map(({ event, lines, newline, comment }) =>
    (comment ? `: keep-alive${newline}` : "") + (event === undefined ? "" : `event: ${event}${newline}`) +
    lines.map((line) => `data: ${line}${newline}`).join("") + newline
  ).join("");
}

function streamOf(chunks: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(iterable: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const out: ProviderEvent[] = [];
  for await (const event of iterable) out.push(event);
  return out;
}

describe("SSE parser", () => {
  it("any chunking of any event stream gives the events the model predicts", () => {
    fc.assert(
      fc.property(fc.array(modelEvent, { minLength: 1, maxLength: 8 }).chain((events) => {
        const bytes = encoder.encode(serialize(events));
        return fc.tuple(fc.constant(events), chunking(bytes));
      }), ([events, chunks]) => {
        const expected = events.map(({ event, lines }) => ({ event: event ?? "message", data: lines.join("\n") }));
        const result = parseAll(chunks);
        assert.deepEqual(result.events, expected);
        assert.equal(result.partial, false);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("LF, CRLF and CR line endings give identical events", () => {
    const body = (nl: string) => `event: a${nl}data: one${nl}data: two${nl}${nl}data: {"x":"é"}${nl}${nl}`;
    const expected = [{ event: "a", data: "one\ntwo" }, { event: "message", data: '{"x":"é"}' }];
    for (const nl of ["\n", "\r\n", "\r"]) assert.deepEqual(parseText(body(nl)), expected, JSON.stringify(nl));
  });

  it("a CR ending one chunk and an LF starting the next are one line ending", () => {
    const chunks = ["data: a\r", "\ndata: b\r", "\n\r", "\n"].map((s) => encoder.encode(s));
    assert.deepEqual(parseAll(chunks).events, [{ event: "message", data: "a\nb" }]);
  });

  it("a chunk that decodes to nothing (empty, or part of a UTF-8 sequence) keeps a pending CR", () => {
    const euro = encoder.encode("€"); // three bytes
    const chunks = [encoder.encode("data: x\r"), new Uint8Array(0), encoder.encode("\ndata: "), euro.subarray(0, 1), euro.subarray(1), encoder.encode("\r\n\r\n")];
    assert.deepEqual(parseAll(chunks).events, [{ event: "message", data: "x\n€" }]);
  });

  it("comments, id/retry/unknown fields, one optional space and a leading BOM follow the standard", () => {
    const text = "\uFEFF: hello\nid: 7\nretry: 10\nfoo: bar\ndata:no-space\ndata:  two spaces\ndata\n\n";
    assert.deepEqual(parseText(text), [{ event: "message", data: "no-space\n two spaces\n" }]);
  });

  it("events without data are not dispatched, and the event name resets after each dispatch", () => {
    assert.deepEqual(parseText("event: ping\n\nevent: x\ndata: 1\n\ndata: 2\n\n"), [
      { event: "x", data: "1" },
      { event: "message", data: "2" },
    ]);
  });

  it("[DONE] is delivered as data for the chat decoder to interpret", () => {
    assert.deepEqual(parseText("data: [DONE]\n\n"), [{ event: "message", data: "[DONE]" }]);
  });

  it("a body that stops inside an event reports partial and does not dispatch it", () => {
    const result = parseAll([encoder.encode("data: 1\n\ndata: 2\n")]);
    assert.deepEqual(result.events, [{ event: "message", data: "1" }]);
    assert.equal(result.partial, true);
  });

  it("one event over the bound fails with event_too_large, whether one long line or many data lines", () => {
    const line = "x".repeat(1000);
    const longLine = parseAll([encoder.encode(`data: ${line}`)], 999);
    assert.equal(longLine.failure, StreamErrorCode.eventTooLarge);
    const manyLines = parseAll([encoder.encode(`data: ${line.slice(0, 400)}\n`.repeat(3))], 999);
    assert.equal(manyLines.failure, StreamErrorCode.eventTooLarge);
  });

  it("an event's type counts toward the bound: a 1,000-char event: line in one chunk fails with event_too_large", () => {
    const result = parseAll([encoder.encode(`event: ${"t".repeat(1000)}\n`)], 999);
    assert.equal(result.failure, StreamErrorCode.eventTooLarge);
    const withData = parseAll([encoder.encode(`event: ${"t".repeat(500)}\ndata: ${"d".repeat(500)}\n`)], 999);
    assert.equal(withData.failure, StreamErrorCode.eventTooLarge);
  });

  it("many events whose total exceeds the bound are fine; the default bound is 1 MiB", () => {
    const frame = `data: ${"y".repeat(500)}\n\n`;
    const result = parseAll([encoder.encode(frame.repeat(10))], 999);
    assert.equal(result.failure, null);
    assert.equal(result.events.length, 10);
    assert.equal(MAX_EVENT_CHARS, 1_048_576);
    const huge = parseAll([encoder.encode(`data: ${"z".repeat(MAX_EVENT_CHARS)}`)]);
    assert.equal(huge.failure, StreamErrorCode.eventTooLarge);
  });

  it("decodeStream turns an oversized event into an error event and stops reading", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(encoder.encode("data: " + "a".repeat(4096)));
      },
    });
    const events = await collect(decodeStream("openai-chat", body, { maxEventChars: 10_000 }));
    assert.deepEqual(events, [{ type: "error", code: StreamErrorCode.eventTooLarge, providerCode: null }]);
    assert.ok(pulled < 10);
  });

  it("decodeStream reports malformed JSON once, then stops", async () => {
    const events = await collect(decodeStream("openai-chat", streamOf(["data: {not json\n\n", 'data: {"choices":[]}\n\n'])));
    assert.deepEqual(events, [{ type: "error", code: StreamErrorCode.malformed, providerCode: null }]);
  });
});
