/**
 * Reads one output frame as the spec tells a client to: strict JSON, the
 * protocol's identity, then fail closed on anything this version does not
 * define (frame type, event name, error code, enum value), using the same
 * schemas the server's output is typed by. A problem is a short description
 * without the frame's content, which may hold user text.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorResponseSchema, type EventFrame, EventFrameSchema, ResultResponseSchema } from "../protocol/envelopes.ts";
import { ErrorCodeSchema, isEventName } from "../protocol/events.ts";
import type { ErrorCode } from "../protocol/errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
import { parseFrame } from "../protocol/json.ts";
import { LIMITS } from "../protocol/limits.ts";

/** A success response; its `result` is checked against its method's schema by whoever holds the request. */
export interface ResultFrame {
  readonly type: "response";
  readonly instance_id: string;
  readonly seq: number;
  readonly id: string;
  readonly result: Record<string, unknown>;
}

/** An error response. */
export interface ErrorFrame {
  readonly type: "response";
  readonly instance_id: string;
  readonly seq: number;
  readonly id: string | null;
  readonly error: { readonly code: ErrorCode };
}

/** One validated output frame. */
export type OutputFrame = ResultFrame | ErrorFrame | EventFrame;

/** The outcome of {@link readOutputFrame}. */
export type FrameReading = { readonly ok: true; readonly frame: OutputFrame } | { readonly ok: false; readonly problem: string };

const problem = (text: string): FrameReading => ({ ok: false, problem: text });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses and validates the bytes of one output frame (LF removed). */
export function readOutputFrame(bytes: Uint8Array): FrameReading {
  const parsed = parseFrame(bytes, LIMITS.json_depth);
  if (!parsed.ok) return problem("an output frame is not strict JSON within the depth bound");
  if (parsed.duplicate !== null) return problem("an output frame has a duplicate key");
  const value = parsed.value;
  if (!isRecord(value)) return problem("an output frame is not a JSON object");
  if (value.protocol !== PROTOCOL || value.version !== PROTOCOL_VERSION) {
    return problem(`an output frame is not ${PROTOCOL} version ${PROTOCOL_VERSION}`);
  }
  if (value.type === "event") {
    if (typeof value.event !== "string" || !isEventName(value.event)) return problem("unknown event name");
    const event = v.safeParse(EventFrameSchema, value);
    return event.success ? { ok: true, frame: event.output } : problem(`malformed ${value.event} event`);
  }
  if (value.type !== "response") return problem("unknown frame type");
  if ("error" in value) {
    if (!isRecord(value.error) || !v.is(ErrorCodeSchema, value.error.code)) return problem("unknown error code");
    const error = v.safeParse(ErrorResponseSchema, value);
    return error.success ? { ok: true, frame: error.output as ErrorFrame } : problem("malformed error response");
  }
  const result = v.safeParse(ResultResponseSchema, value);
  return result.success ? { ok: true, frame: result.output as ResultFrame } : problem("malformed response");
}
