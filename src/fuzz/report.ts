/**
 * What a failing property shows: the frame as text (fast-check would print
 * a `Uint8Array` as a list of numbers, unreadable for a 200-byte JSON frame)
 * and, through {@link expectAnswer}, the expected and the actual code and id
 * side by side. Frames are text except for the bytes that make them invalid
 * UTF-8, which are shown as `\xHH`.
 *
 * @module
 */

/** How much of a frame a report quotes; the depth frames are 64 KB. */
const QUOTE_CHARS = 160;

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `bytes` as one quoted, escaped line: valid UTF-8 as JSON-escaped text, otherwise ASCII with `\xHH` for every other byte. */
export function frameText(bytes: Uint8Array): string {
  let text: string;
  try {
    text = JSON.stringify(strict.decode(bytes));
  } catch {
    text = `"${Array.from(bytes, (byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, "0")}`)).join("")}"`;
  }
  return text.length <= QUOTE_CHARS ? text : `${text.slice(0, QUOTE_CHARS)}… (${bytes.length} bytes)`;
}

/** What {@link expectAnswer} compares with: the expected response of an invalid frame. */
export interface ExpectedAnswer {
  readonly bytes: Uint8Array;
  readonly code: string;
  readonly id: string | null;
  readonly label: string;
}

/** A parsed response frame, as far as {@link expectAnswer} looks at it. */
export interface AnswerFrame {
  readonly id?: unknown;
  readonly error?: { readonly code?: unknown } | null;
  readonly result?: unknown;
}

/**
 * Throws unless `response` is the error `frame` must get (its code and id).
 * The message names the label, both codes and ids, and the frame as text, so
 * a fast-check failure report says what went wrong without decoding bytes.
 */
export function expectAnswer(frame: ExpectedAnswer, response: AnswerFrame | undefined): void {
  const actualCode = response === undefined ? "no response" : response.error ? String(response.error.code) : "a result";
  const actualId = response === undefined ? "-" : JSON.stringify(response.id ?? null);
  if (actualCode === frame.code && actualId === JSON.stringify(frame.id)) return;
  throw new Error(
    `invalid frame "${frame.label}": expected ${frame.code} with id ${JSON.stringify(frame.id)}, got ${actualCode} with id ${actualId}; frame: ${
      frameText(frame.bytes)
    }`,
  );
}
