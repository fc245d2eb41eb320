/**
 * Builds output frames. Every frame carries the protocol identity, the child's
 * `instance_id` and a `seq` that starts at 1 and strictly increases across all
 * frames, because the encoder is the only place that assigns it.
 *
 * @module
 */

import type { ErrorCode } from "./errors.ts";
import { PROTOCOL, PROTOCOL_VERSION } from "./identity.ts";

/** A JSON-serialisable value the backend itself constructed. */
export type OutputValue =
  | null
  | boolean
  | number
  | string
  | readonly OutputValue[]
  | { readonly [key: string]: OutputValue };

/** Raised when a frame would exceed the output bound: a bug, never client input. */
export class OutputFrameTooLarge extends Error {
  /** Creates the error for a frame of `bytes` bytes. */
  constructor(bytes: number) {
    super(`Output frame of ${bytes} bytes exceeds the output frame bound`);
    this.name = "OutputFrameTooLarge";
  }
}

const encoder = new TextEncoder();

/** Encodes responses and events for one child. */
export class FrameEncoder {
  readonly #instanceId: string;
  readonly #maxBytes: number;
  #seq = 0;
  readonly #prefix: string;

  /** Creates an encoder for `instanceId`; frames are at most `maxBytes` bytes with LF. */
  constructor(instanceId: string, maxBytes: number) {
    this.#instanceId = instanceId;
    this.#maxBytes = maxBytes;
    this.#prefix = `{"protocol":${JSON.stringify(PROTOCOL)},"version":${PROTOCOL_VERSION},`;
  }

  get instanceId(): string {
    return this.#instanceId;
  }

  /** Encodes a success response to `id`. */
  result(id: string, result: OutputValue): Uint8Array {
    return this.#frame("response", `"id":${JSON.stringify(id)},"result":${JSON.stringify(result)}`);
  }

  /** Encodes an error response; `id` is `null` when the request's identity is unrecoverable. */
  error(id: string | null, code: ErrorCode): Uint8Array {
    return this.#frame("response", `"id":${JSON.stringify(id)},"error":{"code":${JSON.stringify(code)}}`);
  }

  /** Encodes a run event: `{ …, "type": "event", …, "event": name, "data": data }`. */
  event(name: string, data: OutputValue): Uint8Array {
    return this.#frame("event", `"event":${JSON.stringify(name)},"data":${JSON.stringify(data)}`);
  }

  #frame(type: string, body: string): Uint8Array {
    const seq = this.#seq + 1;
    const text = `${this.#prefix}"type":"${type}","instance_id":"${this.#instanceId}","seq":${seq},${body}}\n`;
    const bytes = encoder.encode(text);
    if (bytes.length > this.#maxBytes) throw new OutputFrameTooLarge(bytes.length);
    this.#seq = seq;
    return bytes;
  }
}
