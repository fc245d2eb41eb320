/**
 * The buffers of a streaming history read: the read chunk sequential reads
 * share, the copy of a line that spans chunks, and a history's first read
 * made ahead of its parse (a listing reads the next history while it parses
 * this one).
 *
 * @module
 */

import type { HeldFile } from "./held-file.ts";

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

/** A held file and, when it was read ahead, its first read. */
export interface Prepared {
  readonly held: HeldFile;
  readonly first: FirstRead | null;
}

/** The first read of a history, made before its examination: `count` bytes at offset 0 of `buffer`, of `asked`. */
export interface FirstRead {
  readonly buffer: ReadBuffer;
  readonly asked: number;
  readonly count: number;
}

export const unread = (held: HeldFile): Prepared => ({ held, first: null });

/** The most bytes the first read under `maxBytes` asks for. Small files get a small buffer; fstat may under-report, so never below 64 KiB. */
export const firstAsked = (size: number, maxBytes: number): number => Math.min(READ_CHUNK_BYTES, maxBytes + 1, Math.max(size + 1, 65_536));

/**
 * Makes the first read of `held` into `buffer` now, as the safe reader
 * would under `maxBytes`. The reader uses it only when its own bound asks
 * for the same bytes, so a bound passed here that is at most the file's own
 * admission never reads more than the read may.
 */
export function readAhead(held: Promise<HeldFile>, buffer: ReadBuffer, maxBytes: number): Promise<Prepared> {
  return held.then(async (opened) => {
    if (!opened.ok || opened.info.size > maxBytes) return unread(opened);
    const asked = firstAsked(opened.info.size, maxBytes);
    try {
      return { held: opened, first: { buffer, asked, count: await opened.handle.read(buffer.take(asked), 0) } };
    } catch {
      return unread(opened); // the reader reads again and meets the failure itself
    }
  });
}

/** Closes a prepared file that will not be read, once its first read is over. */
export function releaseLater(prepared: Promise<Prepared>): void {
  void prepared.then(({ held }) => {
    if (held.ok) held.handle.close().catch(() => {});
  });
}
