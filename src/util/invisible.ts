/**
 * The characters a person cannot see, or that reorder or disguise what is
 * around them, and their visible escape: one rule for every place that
 * shows untrusted text to a person for a decision (approval prompts of the
 * tools, `magi-code mcp approve | list`).
 *
 * @module
 */

/**
 * Controls (C0 and C1), format characters (bidi embeddings, overrides and
 * isolates U+202A–U+202E, U+2066–U+2069, the marks U+200E/U+200F, zero-width
 * U+200B–U+200D, U+2060–U+2064, U+FEFF and every other `Cf`), line and
 * paragraph separators, every default-ignorable code point (the combining
 * grapheme joiner U+034F, Hangul fillers U+115F, U+3164, variation selectors
 * such as U+FE0F), unassigned and private-use code points (a later Unicode
 * may make them format characters), lone surrogates, and spaces other than
 * U+0020, which would let a value pad itself out of view.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs}/gu;

/** `text` with every invisible character (see above) written as a visible `\u{…}` escape of at least four hex digits. */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u{${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}}`);
}
