/**
 * Incremental Server-Sent Events parser (the WHATWG "event stream
 * interpretation"), bytes in at any chunking, events out.
 *
 * - UTF-8 is decoded with `stream: true`, so a character split across chunks
 *   survives; a leading BOM is dropped.
 * - Lines end in CRLF, LF or CR. A CR that ends a chunk is remembered, so a
 *   CRLF split across chunks is one line ending, not two.
 * - `data:` lines join with "\n"; one space after the colon is dropped;
 *   comment lines (":…") and `id`/`retry`/unknown fields are ignored (we never
 *   reconnect). A blank line dispatches; an event without data is dropped.
 * - `data: [DONE]` is passed through as data ({@link DONE_DATA}); only the chat
 *   decoder gives it meaning.
 * - Bounded: one event (its pending line, its type and its data so far) may
 *   not exceed `maxEventChars`; past that the parser fails with
 *   `event_too_large` instead of buffering a hostile or broken stream without
 *   limit. Nothing else outlives an event.
 *
 * @module
 */

import { StreamErrorCode } from "./events.ts";

/** One dispatched SSE event; `event` is "message" when no `event:` field came. */
export interface SseEvent {
  /** The `event:` field, or "message". */
  readonly event: string;
  /** The `data:` lines joined with "\n". */
  readonly data: string;
}

/** The chat completions end-of-stream sentinel, as it appears in `data`. */
export const DONE_DATA = "[DONE]";

/** Default bound on one event, in UTF-16 code units (1 MiB; the largest recorded event is ~30 KB). */
export const MAX_EVENT_CHARS = 1_048_576;

const LF = 10;
const CR = 13;
const COLON = 58;
const SPACE = 32;

/** Incremental SSE parser; feed bytes with {@link SseParser.push}, then call {@link SseParser.finish}. */
export class SseParser {
  readonly #decoder = new TextDecoder("utf-8");
  readonly #maxEventChars: number;
  #line = "";
  #pendingCR = false;
  #eventType = "";
  #data: string[] = [];
  #dataChars = 0;
  #inEvent = false;
  #failed: typeof StreamErrorCode.eventTooLarge | null = null;

  /** `maxEventChars` bounds one event; see {@link MAX_EVENT_CHARS}. */
  constructor(maxEventChars: number = MAX_EVENT_CHARS) {
    this.#maxEventChars = maxEventChars;
  }

  /** `event_too_large` once the bound was crossed; the parser then ignores further input. */
  get failure(): typeof StreamErrorCode.eventTooLarge | null {
    return this.#failed;
  }

  /** Feeds one chunk; returns the events it completed, in order. */
  push(bytes: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.#failed === null) this.#text(this.#decoder.decode(bytes, { stream: true }), out);
    return out;
  }

  /**
   * Ends the input. `partial` is true when the body stopped inside an event
   * (bytes after the last blank line): evidence of truncation. Such an event
   * is not dispatched, as the standard says.
   */
  finish(): { readonly events: SseEvent[]; readonly partial: boolean } {
    const events: SseEvent[] = [];
    if (this.#failed === null) this.#text(this.#decoder.decode(), events);
    const partial = this.#line.length > 0 || this.#inEvent;
    this.#line = "";
    this.#reset();
    return { events, partial };
  }

  #text(chunk: string, out: SseEvent[]): void {
    // A chunk holding only part of a UTF-8 sequence decodes to "": it must not consume a pending CR.
    if (chunk === "") return;
    let start = 0;
    if (this.#pendingCR) {
      this.#pendingCR = false;
      if (chunk.charCodeAt(0) === LF) start = 1;
    }
    for (let index = start; index < chunk.length; index++) {
      const code = chunk.charCodeAt(index);
      if (code !== LF && code !== CR) continue;
      const line = this.#line + chunk.slice(start, index);
      this.#line = "";
      if (code === CR) {
        if (index + 1 === chunk.length) this.#pendingCR = true;
        else if (chunk.charCodeAt(index + 1) === LF) index++;
      }
      start = index + 1;
      this.#field(line, out);
      if (this.#failed !== null) return;
    }
    this.#line += chunk.slice(start);
    if (this.#line.length + this.#held() > this.#maxEventChars) this.#fail();
  }

  /** What the current event holds so far, in UTF-16 code units: its data and its type. */
  #held(): number {
    return this.#dataChars + this.#eventType.length;
  }

  #field(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) out.push({ event: this.#eventType || "message", data: this.#data.join("\n") });
      this.#reset();
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    this.#inEvent = true;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (name === "data") {
      this.#data.push(value);
      this.#dataChars += value.length + 1;
    } else if (name === "event") {
      this.#eventType = value;
    }
    if (this.#held() > this.#maxEventChars) this.#fail();
  }

  #fail(): void {
    this.#failed = StreamErrorCode.eventTooLarge;
    this.#line = "";
    this.#reset();
  }

  #reset(): void {
    this.#eventType = "";
    this.#data = [];
    this.#dataChars = 0;
    this.#inEvent = false;
  }
}
