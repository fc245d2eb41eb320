/**
 * Redaction for text that arrives in pieces. A secret split across two
 * provider deltas matches in neither, so redacting each delta alone would
 * let it through; this holds back the tail that could still be the start of
 * a secret and releases text only up to a point no secret can straddle.
 *
 * @module
 */

import { redactSecrets } from "../util/redaction.ts";

/**
 * Releases redacted text in order. Release points are whitespace boundaries
 * at least the longest known secret's length before the end (credential
 * patterns are whitespace-free tokens, and a `Bearer` scheme stays with its
 * token), moved back before any known secret that would straddle them. Text
 * without such a point is held (a run's content is bounded elsewhere), since
 * a cut inside a token could split a credential into unrecognisable halves.
 */
export class StreamRedactor {
  readonly #secrets: readonly string[];
  readonly #longest: number;
  #held = "";
  // Held text before this index is known to hold no whitespace, so a long token is scanned once.
  #scanned = 0;

  /** Creates a redactor for `secrets` (known values, as `redactSecrets` takes them). */
  constructor(secrets: readonly string[]) {
    this.#secrets = secrets;
    this.#longest = secrets.reduce((max, secret) => Math.max(max, secret.length), 0);
  }

  /** Adds `text`; returns the redacted text now safe to show (possibly ""). */
  push(text: string): string {
    this.#held += text;
    const cut = this.#cut();
    if (cut === 0) return "";
    const out = this.#held.slice(0, cut);
    this.#held = this.#held.slice(cut);
    this.#scanned = 0;
    return redactSecrets(out, this.#secrets);
  }

  /** Releases everything held, redacted; the redactor is empty afterwards. */
  flush(): string {
    const out = this.#held;
    this.#held = "";
    this.#scanned = 0;
    return out === "" ? "" : redactSecrets(out, this.#secrets);
  }

  #cut(): number {
    const held = this.#held;
    const limit = held.length - this.#longest;
    if (limit <= 0) return 0;
    let cut = lastBoundary(held, limit, this.#scanned);
    if (cut === 0) this.#scanned = limit;
    // Keep an authorization scheme with the token that follows it, however many blanks part them;
    // when "bearer" ends a longer run, keep that whole run back, since it is one token to redact,
    // and again if that run is itself the token of an earlier scheme.
    for (;;) {
      let beforeBlanks = cut;
      while (beforeBlanks > 0 && /\s/.test(held[beforeBlanks - 1]!)) beforeBlanks--;
      if (!/bearer$/i.test(held.slice(Math.max(0, beforeBlanks - 6), beforeBlanks))) break;
      cut = beforeBlanks - 6;
      while (cut > 0 && !/\s/.test(held[cut - 1]!)) cut--;
    }
    // Overlapping secrets can move the cut more than once; repeat until none crosses it.
    for (let moved = true; moved && cut > 0;) {
      moved = false;
      for (const secret of this.#secrets) {
        if (secret.length === 0) continue;
        // An occurrence crossing the cut starts after `cut - secret.length`.
        const at = held.indexOf(secret, Math.max(0, cut - secret.length + 1));
        if (at !== -1 && at < cut) {
          cut = at;
          moved = true;
        }
      }
    }
    return Math.max(0, cut);
  }
}

/** The position just after the last whitespace character in `[from, limit)`, or 0. */
function lastBoundary(text: string, limit: number, from: number): number {
  for (let index = limit - 1; index >= from; index--) {
    const code = text.charCodeAt(index);
    if (code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d) return index + 1;
  }
  return 0;
}
