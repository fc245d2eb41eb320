/**
 * The entries of a `session.discover` page while the page examines its
 * candidates: each entry's serialized UTF-8 bytes, comma-separated, in one
 * buffer outside the JS heap, decoded once when the page answers. One
 * discovery reuses it for each of its pages.
 *
 * Why not the entry objects: a page runs through several young-generation
 * collections, and every entry held as objects until the answer outlived
 * them. V8 grows its young generation with the bytes that outlive them, so
 * a child's peak grew with the number of pages it had served, about half of
 * what a 10,000-session pass kept alive that way (bench/README.md). Counting
 * the bytes as they are written also gives the page bound exactly what the
 * serialized page will spend.
 *
 * @module
 */

import type { ListEntry } from "./candidate.ts";

/** A `session.discover` entry: a `session.list` entry and whether it awaits the verify walk. */
export type DiscoverEntry = ListEntry & { readonly provisional: boolean };

const COMMA = 0x2c;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A page's entries as bytes, at most `limit` of them (commas included). */
export class PageEntries {
  readonly #bytes: Uint8Array;
  #length = 0;
  #count = 0;

  /** Pages whose entries' serialized form, commas between them included, takes at most `limit` bytes. */
  constructor(limit: number) {
    this.#bytes = new Uint8Array(Math.max(0, limit));
  }

  /** Empties it for the next page. */
  clear(): void {
    this.#length = 0;
    this.#count = 0;
  }

  /** How many entries were added. */
  get count(): number {
    return this.#count;
  }

  /**
   * Adds `entry` when its serialized form (and the comma before it) fits
   * what is left of the limit; else changes nothing and answers false.
   */
  add(entry: DiscoverEntry): boolean {
    // A well-formed JSON.stringify escapes lone surrogates, so the encoder never replaces a code unit.
    const text = JSON.stringify(entry);
    const comma = this.#count > 0 ? 1 : 0;
    const start = this.#length + comma;
    if (start > this.#bytes.length) return false;
    const { read, written } = encoder.encodeInto(text, this.#bytes.subarray(start));
    if (read < text.length) return false;
    if (comma === 1) this.#bytes[this.#length] = COMMA;
    this.#length = start + written;
    this.#count++;
    return true;
  }

  /** The entries, in the order added, as the page answers them. */
  entries(): DiscoverEntry[] {
    if (this.#count === 0) return [];
    return JSON.parse(`[${decoder.decode(this.#bytes.subarray(0, this.#length))}]`) as DiscoverEntry[];
  }
}
