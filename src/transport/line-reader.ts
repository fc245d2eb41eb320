/**
 * Splits an input byte stream into LF-terminated frames before any decoding,
 * so a UTF-8 sequence or a CR/LF pair cut across reads never changes meaning.
 *
 * @module
 */

/** What {@link LineFramer.next} yields. */
export type FrameEvent =
  /** One frame's bytes without its LF; a view valid until the next call to `next` or `feed`. */
  | { readonly kind: "frame"; readonly bytes: Uint8Array }
  /** Byte `maxBytes + 1` of one frame arrived; the framer accepts nothing more. */
  | { readonly kind: "too_large" };

const LF = 0x0a;

/**
 * Holds at most one partial frame of at most `maxBytes` bytes (CR counted, LF
 * not) plus the current read batch, and yields complete frames in order.
 */
export class LineFramer {
  readonly #maxBytes: number;
  readonly #partial: Uint8Array;
  #length = 0;
  #chunk: Uint8Array = new Uint8Array(0);
  #offset = 0;
  #overflowed = false;

  /** Creates a framer that accepts frames of at most `maxBytes` bytes. */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
    this.#partial = new Uint8Array(maxBytes);
  }

  /** Whether a partial (unterminated) frame is buffered. */
  get hasPartial(): boolean {
    return this.#length > 0;
  }

  /** Sets the next read batch; call only after {@link next} returned `null`. */
  feed(chunk: Uint8Array): void {
    this.#chunk = chunk;
    this.#offset = 0;
  }

  /**
   * Returns the next complete frame of the current batch, `too_large` once a
   * frame exceeds the bound (and for ever after), or `null` when the batch is
   * consumed, its unterminated tail kept as the partial frame.
   */
  next(): FrameEvent | null {
    if (this.#overflowed) return { kind: "too_large" };
    const chunk = this.#chunk;
    const start = this.#offset;
    if (start >= chunk.length) return null;
    const lf = chunk.indexOf(LF, start);
    const end = lf === -1 ? chunk.length : lf;
    if (this.#length + (end - start) > this.#maxBytes) {
      this.#overflowed = true;
      this.#length = 0;
      this.#chunk = new Uint8Array(0);
      return { kind: "too_large" };
    }
    if (lf === -1) {
      this.#partial.set(chunk.subarray(start), this.#length);
      this.#length += chunk.length - start;
      this.#offset = chunk.length;
      return null;
    }
    this.#offset = lf + 1;
    if (this.#length === 0) return { kind: "frame", bytes: chunk.subarray(start, end) };
    this.#partial.set(chunk.subarray(start, end), this.#length);
    const bytes = this.#partial.subarray(0, this.#length + (end - start));
    this.#length = 0;
    return { kind: "frame", bytes };
  }
}
