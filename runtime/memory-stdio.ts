/**
 * The in-memory standard streams of the memory runtime: scripted stdin
 * chunks, and captured stdout/stderr that a test can stall or break.
 *
 * @module
 */

import { type ByteReader, type ByteWriter, READ_BATCH_BYTES, RuntimeError } from "../src/host/runtime.ts";

/** Scripted standard input: each pushed chunk is delivered as its own read (split at 4,096 bytes). */
export class MemoryInput implements ByteReader {
  readonly #chunks: Uint8Array[] = [];
  #ended = false;
  #failed = false;
  #closed = false;
  #waiter: ((value: Uint8Array | null | Error) => void) | null = null;
  /** How many reads have been issued. */
  reads = 0;

  /** Queues bytes (a string is UTF-8 encoded). */
  push(data: Uint8Array | string): void {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    for (let offset = 0; offset < bytes.length; offset += READ_BATCH_BYTES) {
      this.#chunks.push(bytes.slice(offset, offset + READ_BATCH_BYTES));
    }
    this.#wake();
  }

  /** Signals end of input after the queued chunks. */
  end(): void {
    this.#ended = true;
    this.#wake();
  }

  /** Makes the next read fail with an I/O error. */
  fail(): void {
    this.#failed = true;
    this.#wake();
  }

  /** Whether the reader was closed by the server. */
  get closed(): boolean {
    return this.#closed;
  }

  read(): Promise<Uint8Array | null> {
    this.reads++;
    return new Promise((resolve, reject) => {
      this.#waiter = (value) => value instanceof Error ? reject(value) : resolve(value);
      this.#wake();
    });
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    const waiter = this.#waiter;
    if (waiter === null) return;
    let value: Uint8Array | null | Error;
    if (this.#closed) value = null;
    else if (this.#failed) value = new RuntimeError("io", "read");
    else if (this.#chunks.length > 0) value = this.#chunks.shift()!;
    else if (this.#ended) value = null;
    else return;
    this.#waiter = null;
    waiter(value);
  }
}

/**
 * Captured standard output that can stall (a client not reading) or break (a
 * closed pipe). It behaves as a pipe with room for everything until stalled
 * and for nothing while stalled: a write is taken at once when it can be,
 * its promise settling later as a runtime's write callback does, and
 * {@link heldBytes} counts what a stall holds back.
 */
export class MemoryOutput implements ByteWriter {
  readonly #parts: Uint8Array[] = [];
  readonly #parsed: Record<string, unknown>[] = [];
  readonly #decoder = new TextDecoder();
  #parsedParts = 0;
  #partial = "";
  #stalled = false;
  #broken = false;
  #held: { bytes: Uint8Array; resolve(): void; reject(error: unknown): void }[] = [];
  /** Called after each completed write. */
  onWrite: (() => void) | null = null;

  write(bytes: Uint8Array): Promise<void> {
    if (this.#broken) return Promise.reject(new RuntimeError("broken_pipe", "write"));
    return new Promise((resolve, reject) => {
      this.#held.push({ bytes: bytes.slice(), resolve, reject });
      this.#flush();
    });
  }

  /** Bytes of writes a stall holds back. */
  heldBytes(): number {
    let bytes = 0;
    for (const held of this.#held) bytes += held.bytes.length;
    return bytes;
  }

  /** Stops completing writes until {@link resume}. */
  stall(): void {
    this.#stalled = true;
  }

  /** Completes held writes and keeps writing. */
  resume(): void {
    this.#stalled = false;
    this.#flush();
  }

  /** Fails every held and future write with `broken_pipe`. */
  break(): void {
    this.#broken = true;
    for (const held of this.#held.splice(0)) held.reject(new RuntimeError("broken_pipe", "write"));
  }

  /** Everything written so far, decoded. */
  text(): string {
    const decoder = new TextDecoder();
    return this.#parts.map((part) => decoder.decode(part, { stream: true })).join("") + decoder.decode();
  }

  /**
   * Every complete line written so far, parsed as JSON. Parsing is
   * incremental, so tests that look after every write stay linear.
   */
  frames(): Record<string, unknown>[] {
    while (this.#parsedParts < this.#parts.length) {
      this.#partial += this.#decoder.decode(this.#parts[this.#parsedParts++], { stream: true });
      const lines = this.#partial.split("\n");
      this.#partial = lines.pop()!;
      for (const line of lines) if (line !== "") this.#parsed.push(JSON.parse(line));
    }
    return this.#parsed.slice();
  }

  #flush(): void {
    while (!this.#stalled && !this.#broken && this.#held.length > 0) {
      const held = this.#held.shift()!;
      this.#parts.push(held.bytes);
      held.resolve();
      this.onWrite?.();
    }
  }
}
