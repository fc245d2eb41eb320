/**
 * Reading a file handle to a bound, for readers that refuse or cut what is
 * longer: asking for one byte past the bound is enough to tell whether the
 * file goes on.
 *
 * @module
 */

/** Up to `max` bytes of `handle` from its start; fewer only at end of file. */
export async function readUpTo(handle: { read(buffer: Uint8Array, position: number): Promise<number> }, max: number): Promise<Uint8Array> {
  const buffer = new Uint8Array(max);
  let length = 0;
  while (length < max) {
    const count = await handle.read(buffer.subarray(length), length);
    if (count === 0) break;
    length += count;
  }
  return buffer.subarray(0, length);
}
