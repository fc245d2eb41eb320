/**
 * Keeps the head and the tail of a subprocess's combined output within a
 * fixed memory bound, however much it prints: build logs put the command
 * line at the top and the error at the bottom, so both ends are worth more
 * than the middle.
 *
 * Redaction happens here, before the cut, with a margin on each side of each
 * cut: a known secret that straddles a cut is still whole inside the margin,
 * is replaced there, and only then is the margin trimmed away. Cutting first
 * would leave a readable prefix of it.
 *
 * @module
 */

import { concatBytes } from "../../util/bytes.ts";
import { redactSecrets } from "../../util/redaction.ts";
import { clampUtf8, tailUtf8 } from "../../util/utf8.ts";
import { formatBytes } from "./tool-text.ts";

/** The kept output of a finished subprocess. */
export interface CollectedOutput {
  /** Redacted text, head and tail joined by an omission note when the middle was dropped. */
  readonly text: string;
  /** Bytes received in all. */
  readonly totalBytes: number;
  /** Bytes left out of `text` (approximate after redaction). */
  readonly omittedBytes: number;
  /** The head alone: all of `text` when nothing was omitted. */
  readonly head: string;
  /** The tail alone: "" when nothing was omitted. */
  readonly tail: string;
}

/** A bounded collector of output bytes. */
export class OutputCollector {
  readonly #headBytes: number;
  readonly #tailBytes: number;
  readonly #margin: number;
  readonly #head: Uint8Array;
  #headLength = 0;
  #tail: Uint8Array[] = [];
  #tailLength = 0;
  #dropped = 0;
  #total = 0;

  /**
   * Keeps the first `headBytes` and the last `tailBytes` bytes for display,
   * plus a redaction margin of at least four bytes per character of the
   * longest of `secrets`.
   */
  constructor(headBytes: number, tailBytes: number, secrets: readonly string[]) {
    this.#headBytes = headBytes;
    this.#tailBytes = tailBytes;
    this.#margin = Math.max(4096, ...secrets.map((secret) => 4 * secret.length + 16));
    this.#head = new Uint8Array(headBytes + this.#margin);
  }

  /** Bytes received so far. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Adds a chunk; the bytes are copied, so the caller may reuse its buffer. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headLength < this.#head.length) {
      const take = Math.min(rest.length, this.#head.length - this.#headLength);
      this.#head.set(rest.subarray(0, take), this.#headLength);
      this.#headLength += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest.slice());
    this.#tailLength += rest.length;
    const keep = this.#tailBytes + this.#margin;
    while (this.#tail.length > 1 && this.#tailLength - this.#tail[0]!.length >= keep) {
      const first = this.#tail.shift()!;
      this.#tailLength -= first.length;
      this.#dropped += first.length;
    }
  }

  /** The redacted, bounded text of everything pushed. */
  finish(secrets: readonly string[]): CollectedOutput {
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    const head = this.#head.subarray(0, this.#headLength);
    if (this.#total <= this.#headBytes + this.#tailBytes) {
      const text = redactSecrets(decode(concatBytes([head, ...this.#tail])), secrets);
      return { text, totalBytes: this.#total, omittedBytes: 0, head: text, tail: "" };
    }
    // Without drops the stream is contiguous, and the tail window may reach back into the head's margin.
    const stream = this.#dropped === 0 ? concatBytes([head, ...this.#tail]) : concatBytes(this.#tail);
    const tailRaw = stream.subarray(Math.max(0, stream.length - this.#tailBytes - this.#margin));
    const headText = clampUtf8(redactSecrets(decode(head), secrets), this.#headBytes, "");
    const tailText = tailUtf8(redactSecrets(decode(tailRaw), secrets), this.#tailBytes);
    const omittedBytes = this.#total - this.#headBytes - this.#tailBytes;
    const note = `\n[… ${formatBytes(omittedBytes)} of output omitted …]\n`;
    return { text: headText + note + tailText, totalBytes: this.#total, omittedBytes, head: headText, tail: tailText };
  }
}
