/**
 * The buffers of a streaming history read: the read chunk sequential reads
 * share, and the copy of a line that spans chunks.
 *
 * @module
 */

/** Most bytes requested per read call, and so the most file bytes held at once (besides one unfinished line). */
export const READ_CHUNK_BYTES = 1_048_576;
/** The read chunk that sequential {@link readSessionFile} calls share: grown on demand, never shrunk. */
export class ReadBuffer {
  #bytes = new Uint8Array(0);

  /** `length` bytes of it (the earlier contents are not kept). */
  take(length: number): Uint8Array {
    if (this.#bytes.length < length) this.#bytes = new Uint8Array(length);
    return this.#bytes.subarray(0, length);
  }
}

/**
 * The bytes of a line begun in an earlier chunk (the read buffer is reused,
 * so they must be copied). Capacity doubles, so a line spanning many chunks
 * costs linear copying, and never exceeds `limit`, the most bytes a read may
 * hold.
 */
export class PendingLine {
  readonly #limit: number;
  #bytes = new Uint8Array(0);
  /** Bytes held. */
  length = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  append(part: Uint8Array): void {
    const needed = this.length + part.length;
    if (needed > this.#bytes.length) {
      const grown = new Uint8Array(Math.min(this.#limit, Math.max(needed, this.#bytes.length * 2)));
      grown.set(this.view());
      this.#bytes = grown;
    }
    this.#bytes.set(part, this.length);
    this.length = needed;
  }

  view(): Uint8Array {
    return this.#bytes.subarray(0, this.length);
  }

  clear(): void {
    this.length = 0;
    // One huge line must not pin its buffer for the rest of the read.
    if (this.#bytes.length > READ_CHUNK_BYTES) this.#bytes = new Uint8Array(0);
  }
}
