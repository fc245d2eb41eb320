/**
 * Splits a stdio server's output into its LF-terminated JSON-RPC messages,
 * each at most a fixed number of bytes. An oversized message is skipped up
 * to its LF rather than buffered: the server's next message still arrives,
 * and the connection learns that one was lost.
 *
 * @module
 */

const LF = 0x0a;

/** What {@link MessageLines.push} reports for one complete line. */
export interface LineSink {
  /** A message's bytes without the LF (a fresh copy, safe to keep). */
  line(bytes: Uint8Array): void;
  /** A message longer than the bound was skipped. */
  oversized(): void;
}

/** Holds at most one partial message of at most `maxBytes` bytes. */
export class MessageLines {
  readonly #maxBytes: number;
  #parts: Uint8Array[] = [];
  #length = 0;
  #skipping = false;

  /** Creates a splitter for messages of at most `maxBytes` bytes (LF not counted). */
  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** Feeds the next read batch (valid only during the call) and reports every line it completes. */
  push(chunk: Uint8Array, sink: LineSink): void {
    let start = 0;
    while (start < chunk.length) {
      const lf = chunk.indexOf(LF, start);
      const end = lf === -1 ? chunk.length : lf;
      this.#take(chunk.subarray(start, end), sink);
      if (lf === -1) return;
      this.#finish(sink);
      start = lf + 1;
    }
  }

  #take(piece: Uint8Array, sink: LineSink): void {
    if (this.#skipping || piece.length === 0) return;
    if (this.#length + piece.length > this.#maxBytes) {
      this.#skipping = true;
      this.#parts = [];
      this.#length = 0;
      sink.oversized();
      return;
    }
    this.#parts.push(piece.slice());
    this.#length += piece.length;
  }

  #finish(sink: LineSink): void {
    if (this.#skipping) {
      this.#skipping = false;
      return;
    }
    const parts = this.#parts;
    const length = this.#length;
    this.#parts = [];
    this.#length = 0;
    if (length === 0) return;
    if (parts.length === 1) return sink.line(parts[0]!);
    const joined = new Uint8Array(length);
    let offset = 0;
    for (const part of parts) {
      joined.set(part, offset);
      offset += part.length;
    }
    sink.line(joined);
  }
}
