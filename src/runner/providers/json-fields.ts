/**
 * Typed reads of untrusted provider JSON. Decoders never trust a field's type:
 * a wrong type reads as absent, so one odd field cannot crash a turn.
 *
 * @module
 */

import type { ProviderEvent } from "./events.ts";

/** A parsed JSON object, as decoders read it. */
export type JsonObject = Readonly<Record<string, unknown>>;

/** `value` when it is a non-array object, else `null`. */
export function record(value: unknown): JsonObject | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
}

/** `value` when it is a string, else `null`. */
export function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** `value` when it is a finite number, else `null`. */
export function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** `value` when it is an array, else an empty one. */
export function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Parses an SSE data payload that must be a JSON object; `null` when it is anything else. */
export function parseObject(data: string): JsonObject | null {
  try {
    return record(JSON.parse(data));
  } catch {
    // The parse error's message quotes the payload, so it is dropped.
    return null;
  }
}

/** One event for a delta that carries text; empty deltas are dropped so consumers never see no-op events. */
export function nonEmpty(value: string | null, make: (delta: string) => ProviderEvent): ProviderEvent[] {
  return value === null || value === "" ? [] : [make(value)];
}
