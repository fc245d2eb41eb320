/**
 * Length-prefixed frames between the child and its sandbox host: a 4-byte
 * big-endian length, then that many bytes of UTF-8 JSON (one object). The
 * bound is checked on the prefix, before any payload is buffered, so a
 * hostile or broken peer can never make the reader hold more than one
 * bounded frame. Anything malformed (a length over the bound, bytes that are
 * not UTF-8 JSON of an object) is reported once and ends the stream: both
 * sides then treat the peer as failed.
 *
 * @module
 */

const HEADER_BYTES = 4;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** One frame's bytes for `message`, or null when they would exceed `maxBytes`. */
export function encodeFrame(message: Readonly<Record<string, unknown>>, maxBytes: number): Uint8Array | null {
  const payload = encoder.encode(JSON.stringify(message));
  if (payload.length > maxBytes) return null;
  const frame = new Uint8Array(HEADER_BYTES + payload.length);
  new DataView(frame.buffer).setUint32(0, payload.length);
  frame.set(payload, HEADER_BYTES);
  return frame;
}

/** What {@link FrameReader.push} found: the whole frames so far, or the stream's fault. */
export type FramePush =
  | { readonly ok: true; readonly frames: readonly Record<string, unknown>[] }
  | { readonly ok: false; readonly fault: "oversized" | "malformed" };

/** Reassembles frames from a byte stream in arbitrary chunks, holding at most one bounded frame. */
export class FrameReader {
  readonly #maxBytes: number;
  #buffer = new Uint8Array(0);
  #failed = false;

  /** @param maxBytes largest payload accepted. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Whether bytes of an unfinished frame are held (at EOF: a truncated frame). */
  get pending(): boolean {
    return this.#buffer.length > 0;
  }

  /** Feeds `chunk`; after a fault every later push reports it again. */
  push(chunk: Uint8Array): FramePush {
    if (this.#failed) return { ok: false, fault: "malformed" };
    const joined = new Uint8Array(this.#buffer.length + chunk.length);
    joined.set(this.#buffer);
    joined.set(chunk, this.#buffer.length);
    const frames: Record<string, unknown>[] = [];
    let offset = 0;
    while (joined.length - offset >= HEADER_BYTES) {
      const length = new DataView(joined.buffer, offset).getUint32(0);
      if (length > this.#maxBytes) return this.#fail("oversized");
      if (joined.length - offset - HEADER_BYTES < length) break;
      const message = parseObject(joined.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length));
      if (message === null) return this.#fail("malformed");
      frames.push(message);
      offset += HEADER_BYTES + length;
    }
    this.#buffer = joined.slice(offset);
    return { ok: true, frames };
  }

  #fail(fault: "oversized" | "malformed"): FramePush {
    this.#failed = true;
    this.#buffer = new Uint8Array(0);
    return { ok: false, fault };
  }
}

function parseObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(decoder.decode(bytes));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : null;
  } catch {
    return null;
  }
}
