/**
 * Reading a whole HTTP body under a byte bound: a `/models` list, an error
 * answer to classify. A body over the bound is cancelled, not buffered.
 *
 * @module
 */

import { concatBytes } from "./bytes.ts";

/** Reads at most `max` bytes of `body` (null: an empty body); null, with the body cancelled, beyond that. */
export async function readBounded(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array | null> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let length = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.length;
      if (length > max) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      parts.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return concatBytes(parts);
}
