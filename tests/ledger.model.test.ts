import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { identifier, invalidFrameFor, type InvalidFrame, request } from "../src/fuzz/mod.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import type { Frame } from "./support/harness.ts";
import { startTapped, type TappedServer } from "./support/wire.ts";
import { concatBytes } from "./support/records.ts";

const encoder = new TextEncoder();
const CAPACITY = LIMITS.request_ids;
const ENVELOPE = `"protocol":"magi-code.local-agent","version":1`;

/** identifier() yields 1–12 or 63–64 bytes, so these 13+-byte ids never collide with generated ones. */
const INIT_ID = "model-initialize";
const prefillId = (index: number) => `prefill-${String(index).padStart(6, "0")}`;

/**
 * Kit labels whose frame carries a recoverable id, so the backend records it
 * and answers with it.
 */
const RECORDING_LABELS: ReadonlySet<string> = new Set([
  "unknown envelope field",
  "__proto__ envelope field",
  "missing params",
  "bad method grammar",
  "duplicate method key",
  "unknown method",
  "unknown params field",
  "__proto__ params field",
  "duplicate params key",
  "params not object",
  "depth 32",
]);

/** Kit labels whose identity is unrecoverable: answered with id null, never recorded. */
const UNRECOVERABLE_LABELS: ReadonlySet<string> = new Set([
  "empty line",
  "CR only",
  "whitespace only",
  "not JSON",
  "JSON array",
  "JSON string",
  "trailing comma",
  "BOM",
  "overlong slash",
  "encoded surrogate",
  "lone continuation",
  "truncated sequence",
  "missing id",
  "numeric id",
  "id too long",
  "id bad char",
  "duplicate id key",
  "depth 33",
]);


const requestLine = (id: string, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify(request(id, method, params))}\n`;

/**
 * Unrecoverable frames that still spell `id` somewhere, so that recording it
 * by mistake would show up as a later `duplicate_id`.
 */
function unrecoverableWithId(id: string): fc.Arbitrary<{ label: string; code: string; bytes: Uint8Array }> {
  const deep = `${"[".repeat(31)}${"]".repeat(31)}`;
  return fc.constantFrom(
    { label: "escaped duplicate id", code: "invalid_request", text: `{${ENVELOPE},"id":"${id}","\\u0069d":"${id}","method":"status","params":{}}` },
    { label: "trailing comma", code: "invalid_request", text: `{${ENVELOPE},"id":"${id}","method":"status","params":{},}` },
    { label: "depth 33", code: "invalid_frame", text: `{${ENVELOPE},"id":"${id}","method":"status","params":{"x":${deep}}}` },
    { label: "invalid UTF-8", code: "invalid_request", text: null },
    { label: "id in an array", code: "invalid_request", text: `[{${ENVELOPE},"id":"${id}","method":"status","params":{}}]` },
  ).map(({ label, code, text }) => ({
    label,
    code,
    bytes: text !== null
      ? encoder.encode(text)
      : concatBytes([`{${ENVELOPE},"id":"${id}","method":"status","params":{"s":"`, new Uint8Array([0xed, 0xa0, 0x80]), `"}}`]),
  }));
}

interface Model {
  /** Every id the backend must have recorded, in order. */
  readonly recorded: string[];
  readonly ids: Set<string>;
  /** Ids sent only inside unrecoverable frames. */
  readonly unrecoverable: string[];
  /** Responses expected so far (the pre-initialization and prefill included). */
  answered: number;
  /** Whether request_limit closed the connection. */
  closed: boolean;
}

interface Real {
  readonly server: TappedServer;
}

/** Sends one frame and returns the one response it must produce, checking its seq. */
async function exchange(m: Model, r: Real, bytes: Uint8Array | string): Promise<Frame> {
  r.server.push(typeof bytes === "string" ? bytes : concatBytes([bytes, "\n"]));
  const frames = await r.server.waitFrames(m.answered + 1);
  const frame = frames[m.answered];
  assert.ok(frame !== undefined, "the frame was answered");
  assert.equal(frame.seq, m.answered + 1, "seq counts every output frame");
  m.answered++;
  return frame;
}

/** The outcome for a new id: the limit closes the connection, anything else records it. */
async function expectNewId(m: Model, r: Real, id: string, frame: Frame, admitted: (frame: Frame) => void): Promise<void> {
  if (m.ids.size >= CAPACITY) {
    assert.deepEqual([frame.id, frame.error?.code], [id, "request_limit"]);
    m.closed = true;
    assert.equal(await r.server.exit, 0, "request_limit closes with exit 0");
    assert.equal(r.server.runtime.input.closed, true);
    return;
  }
  assert.equal(frame.id, id);
  admitted(frame);
  m.ids.add(id);
  m.recorded.push(id);
}

class FreshRequest implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string, readonly method: "status" | "initialize") {}
  check(m: Readonly<Model>): boolean {
    return !m.closed && !m.ids.has(this.id);
  }
  async run(m: Model, r: Real): Promise<void> {
    const params = this.method === "initialize" ? { required_capabilities: ["status"] } : {};
    const frame = await exchange(m, r, requestLine(this.id, this.method, params));
    await expectNewId(m, r, this.id, frame, (answer) => {
      // Executed: status reports the ready child; a second initialize reaches its handler.
      if (this.method === "status") assert.equal(answer.result?.state, "idle");
      else assert.equal(answer.error?.code, "already_initialized");
    });
  }
  toString(): string {
    return `fresh ${this.method} ${JSON.stringify(this.id)}`;
  }
}

class ReusedId implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number, readonly method: "status" | "initialize" | "shutdown") {}
  check(m: Readonly<Model>): boolean {
    return !m.closed && m.recorded.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const id = m.recorded[this.pick % m.recorded.length]!;
    const params = this.method === "initialize" ? { required_capabilities: ["status"] } : {};
    const frame = await exchange(m, r, requestLine(id, this.method, params));
    // Never executed again: no status result, no already_initialized, no stopping.
    assert.deepEqual([frame.id, frame.error?.code], [id, "duplicate_id"]);
  }
  toString(): string {
    return `reused ${this.method} #${this.pick}`;
  }
}

class FreshRejected implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string, readonly frame: InvalidFrame) {}
  check(m: Readonly<Model>): boolean {
    return !m.closed && !m.ids.has(this.id);
  }
  async run(m: Model, r: Real): Promise<void> {
    const frame = await exchange(m, r, this.frame.bytes);
    await expectNewId(m, r, this.id, frame, (answer) => assert.equal(answer.error?.code, this.frame.code, this.frame.label));
  }
  toString(): string {
    return `rejected ${JSON.stringify(this.id)} (${this.frame.label})`;
  }
}

class Unrecoverable implements fc.AsyncCommand<Model, Real> {
  constructor(readonly id: string, readonly frame: { label: string; code: string; bytes: Uint8Array }) {}
  check(m: Readonly<Model>): boolean {
    return !m.closed && !m.ids.has(this.id);
  }
  async run(m: Model, r: Real): Promise<void> {
    const frame = await exchange(m, r, this.frame.bytes);
    // Not counted, so even a full ledger answers with the parse/envelope code, not request_limit.
    assert.deepEqual([frame.id, frame.error?.code], [null, this.frame.code], this.frame.label);
    m.unrecoverable.push(this.id);
  }
  toString(): string {
    return `unrecoverable ${JSON.stringify(this.id)} (${this.frame.label})`;
  }
}

class FreshAfterUnrecoverable implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  #candidates(m: Readonly<Model>): string[] {
    return m.unrecoverable.filter((id) => !m.ids.has(id));
  }
  check(m: Readonly<Model>): boolean {
    return !m.closed && this.#candidates(m).length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const candidates = this.#candidates(m);
    const id = candidates[this.pick % candidates.length]!;
    const frame = await exchange(m, r, requestLine(id, "status"));
    await expectNewId(m, r, id, frame, (answer) => assert.equal(answer.result?.state, "idle"));
  }
  toString(): string {
    return `status reusing an unrecoverable frame's id #${this.pick}`;
  }
}

const commands = [
  fc.tuple(identifier(), fc.constantFrom("status" as const, "initialize" as const)).map(([id, method]) => new FreshRequest(id, method)),
  fc.tuple(fc.nat(), fc.constantFrom("status" as const, "initialize" as const, "shutdown" as const)).map(([pick, method]) =>
    new ReusedId(pick, method)
  ),
  identifier().chain((id) =>
    invalidFrameFor(id).filter((frame) => RECORDING_LABELS.has(frame.label)).map((frame) => new FreshRejected(id, frame))
  ),
  identifier().chain((id) =>
    fc.oneof(
      unrecoverableWithId(id),
      invalidFrameFor(id).filter((frame) => UNRECOVERABLE_LABELS.has(frame.label)),
    ).map((frame) => new Unrecoverable(id, frame))
  ),
  fc.nat().map((pick) => new FreshAfterUnrecoverable(pick)),
];

/** Starts an initialized server and records `prefill` more ids (alternately admitted and rejected). */
async function setUp(prefill: number): Promise<{ model: Model; real: Real }> {
  const server = startTapped();
  server.push(requestLine(INIT_ID, "initialize", { required_capabilities: ["status"] }));
  const [ready] = await server.waitFrames(1);
  assert.equal((ready?.result?.status as { readiness?: string } | undefined)?.readiness, "ready");
  const lines: string[] = [];
  for (let i = 0; i < prefill; i++) {
    lines.push(i % 2 === 0 ? requestLine(prefillId(i), "status") : requestLine(prefillId(i), "status", { unknown: true }));
  }
  // The client keeps at most the writer's 32 frames in flight, as the spec leaves it to do.
  for (let sent = 0; sent < prefill; sent += LIMITS.pending_output_frames) {
    await server.waitFrames(1 + sent);
    server.push(lines.slice(sent, sent + LIMITS.pending_output_frames).join(""));
  }
  const frames = await server.waitFrames(1 + prefill);
  assert.equal(frames.length, 1 + prefill);
  const recorded = [INIT_ID, ...Array.from({ length: prefill }, (_, i) => prefillId(i))];
  return {
    model: { recorded, ids: new Set(recorded), unrecoverable: [], answered: 1 + prefill, closed: false },
    real: { server },
  };
}

describe("ledger model", () => {
  it("server keeps the id ledger of the model under any sequence of fresh, reused, rejected and unrecoverable requests", async () => {
    let limitsHit = 0;
    await fc.assert(
      fc.asyncProperty(
        // Half the runs start close to a full ledger, so random commands cross the limit.
        fc.oneof(fc.constant(0), fc.integer({ min: CAPACITY - 16, max: CAPACITY - 1 })),
        fc.commands(commands, { maxCommands: 60, size: "max" }),
        async (prefill, cmds) => {
          const { model, real } = await setUp(prefill);
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          if (model.closed) {
            limitsHit++;
            // Nothing is read after request_limit.
            real.server.push(requestLine("after-the-limit", "shutdown"));
            await new Promise((resolve) => setTimeout(resolve, 0));
          } else {
            real.server.runtime.input.end();
            assert.equal(await real.server.exit, 0);
          }
          assert.equal(real.server.frames.length, model.answered, "exactly one response per frame");
        },
      ),
      { numRuns: fuzzRuns(80, 40) },
    );
    assert.ok(limitsHit > 0, "some runs reached request_limit");
  });

  it("server answers the 4,097th new id with request_limit after 4,096 admitted and rejected ids, then reads nothing", async () => {
    const server = startTapped();
    const lines: (string | Uint8Array)[] = [];
    const expected: [string | null, string][] = [];
    const add = (line: string | Uint8Array, answer: [string | null, string]) => {
      lines.push(typeof line === "string" ? line : concatBytes([line, "\n"]));
      expected.push(answer);
    };
    for (let i = 0; i < CAPACITY; i++) {
      const id = `id${i}`;
      switch (i % 4) {
        case 0:
          add(requestLine(id, "status"), [id, "not_initialized"]);
          break;
        case 1:
          add(requestLine(id, "status", { x: 1 }), [id, "invalid_params"]);
          break;
        case 2:
          add(requestLine(id, "session.frobnicate"), [id, "unsupported_method"]);
          break;
        default:
          add(`{${ENVELOPE},"id":"${id}","method":"status","params":{},"extra":1}\n`, [id, "invalid_request"]);
      }
      // Unrecoverable frames naming fresh ids never count towards the limit.
      if (i % 16 === 0) {
        add(`{${ENVELOPE},"id":"u${i}","\\u0069d":"u${i}","method":"status","params":{}}\n`, [null, "invalid_request"]);
        add(`{${ENVELOPE},"id":"v${i}","method":"status","params":{"x":${"[".repeat(31)}${"]".repeat(31)}}}\n`, [null, "invalid_frame"]);
        add("\n", [null, "invalid_frame"]);
      }
    }
    // The ledger is full. Old ids are still duplicates (shutdown is not executed); unrecoverable frames
    // still get their own codes; the first new recoverable id gets request_limit and closes.
    add(requestLine("id0", "shutdown"), ["id0", "duplicate_id"]);
    add(requestLine(`id${CAPACITY - 1}`, "status"), [`id${CAPACITY - 1}`, "duplicate_id"]);
    add(`{${ENVELOPE},"id":"w1","\\u0069d":"w1","method":"status","params":{}}\n`, [null, "invalid_request"]);
    add(`{${ENVELOPE},"id":"w2","method":"status","params":{"x":${"[".repeat(31)}${"]".repeat(31)}}}\n`, [null, "invalid_frame"]);
    add(requestLine("the-4097th", "status"), ["the-4097th", "request_limit"]);
    const answered = expected.length;
    // None of these may be read: a duplicate, a new id, a shutdown and a partial frame.
    lines.push(requestLine("id1", "status"), requestLine("another", "status"), requestLine("bye", "shutdown"), '{"partial');

    // Windows of at most 32 answered frames (the writer's bound, which the client must respect); the
    // last window carries the limit and what must stay unread behind it.
    const window = LIMITS.pending_output_frames;
    for (let sent = 0; sent < answered; sent += window) {
      await server.waitFrames(sent);
      const end = Math.min(sent + window, answered);
      server.push(concatBytes(lines.slice(sent, end === answered ? lines.length : end)));
    }
    const code = await server.exit;
    assert.equal(code, 0);
    assert.equal(server.runtime.input.closed, true);
    assert.equal(server.frames.length, answered);
    assert.deepEqual(server.frames.map((frame) => [frame.id, frame.error?.code ?? "result"]), expected);
    assert.deepEqual(server.frames.map((frame) => frame.seq), Array.from({ length: answered }, (_, i) => i + 1));
  });
});
