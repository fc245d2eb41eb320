/**
 * Byte-array helpers shared by the writer, the appender and the tools.
 *
 * @module
 */

/** A new array holding `parts` one after another. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
