/**
 * The kit's text generators at the wire's byte bounds: identifiers (request
 * ids, methods, capabilities, opaque ids) and `turn.start` prompts. In a file
 * of their own because both the frame generators and the params generators
 * build on them.
 *
 * @module
 */

import fc from "fast-check";
import { LIMITS } from "../protocol/limits.ts";

const encoder = new TextEncoder();
const IDENT_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/** Strings over `chars` of every length up to the 64-byte id bound, with 1–12, 63 and 64 favoured: the id grammars' edges. */
export function boundedId(chars: string): fc.Arbitrary<string> {
  const char = fc.constantFrom(...chars);
  return fc.oneof(
    fc.string({ unit: char, minLength: 1, maxLength: 12 }),
    fc.string({ unit: char, minLength: 13, maxLength: LIMITS.identifier_bytes - 2 }),
    fc.string({ unit: char, minLength: LIMITS.identifier_bytes - 1, maxLength: LIMITS.identifier_bytes }),
  );
}

/** An identifier in the wire grammar: 1–64 bytes of `[A-Za-z0-9._-]`, every length, with 1, 63 and 64 favoured. */
export function identifier(): fc.Arbitrary<string> {
  return boundedId(IDENT_CHARS);
}

/**
 * Whether `text` holds a character outside Unicode's White_Space property,
 * the spec's "non-whitespace". Not JavaScript's `\S`: `\s` leaves out
 * U+0085 (NEL, which is White_Space) and takes in U+FEFF (which is not).
 */
export function hasNonSpace(text: string): boolean {
  return /\P{White_Space}/u.test(text);
}

/**
 * Every Unicode White_Space character: a prompt of only these is blank,
 * hence `invalid_params`.
 */
export const WHITE_SPACE: readonly string[] = Object.freeze([
  ..."\t\n\u000b\u000c\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000",
]);

/**
 * Prompts made only of characters that look empty but are not White_Space
 * (byte order mark, zero-width space, Mongolian vowel separator, word
 * joiner): the spec's "non-whitespace" admits them.
 */
export const INVISIBLE_NON_SPACE: readonly string[] = Object.freeze(["\ufeff", "\u200b", "\u180e", "\u2060", " \ufeff "]);

/** A `turn.start` prompt and whether the spec admits it (at most `prompt_bytes` UTF-8 bytes, not all whitespace). */
export interface Prompt {
  readonly text: string;
  /** Whether a conforming child admits it rather than answering `invalid_params`. */
  readonly valid: boolean;
}

const PROMPT_UNITS = ["a", " ", "\n", "\t", "\u3000", "é", "€", "😀"] as const;

/**
 * Prompts at and around the 16,384-byte bound, built from 1- to 4-byte
 * characters so the byte count and the UTF-16 length disagree, plus
 * whitespace-only ones (ASCII and Unicode spaces), each labelled valid or not.
 */
export function prompt(): fc.Arbitrary<Prompt> {
  const limit = LIMITS.prompt_bytes;
  const unit = fc.constantFrom(...PROMPT_UNITS);
  const near = fc.tuple(fc.integer({ min: limit - 8, max: limit + 8 }), fc.array(unit, { minLength: 1, maxLength: 8 })).map(([bytes, units]) => {
    let text = "";
    for (let index = 0; encoder.encode(text).length < bytes; index++) text += units[index % units.length];
    return text;
  });
  const small = fc.string({ unit, minLength: 0, maxLength: 64 });
  const blank = fc.string({ unit: fc.constantFrom(" ", "\n", "\t", "\r", "\u00a0", "\u3000"), minLength: 0, maxLength: 32 });
  return fc.oneof(near, small, blank).map((text) => ({
    text,
    valid: encoder.encode(text).length <= limit && hasNonSpace(text),
  }));
}
