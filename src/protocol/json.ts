/**
 * Strict JSON parsing for one input frame. `JSON.parse` is unusable here: it has
 * no depth bound, silently keeps the last duplicate key, accepts lone surrogate
 * escapes and overflowing numbers, and treats `__proto__` specially. This parser
 * is iterative (an explicit container stack), so no `maxDepth` can overflow the
 * call stack, and it stops the moment depth exceeds the bound, so 100,000
 * unclosed `[` cost only 33 steps.
 *
 * @module
 */

import { ErrorCode } from "./errors.ts";
import type { DuplicateKey, JsonObject, JsonValue, ParseResult } from "./json-value.ts";
import { LIMITS } from "./limits.ts";


const INVALID_FRAME: ParseResult = Object.freeze({ ok: false, code: ErrorCode.invalidFrame });
const INVALID_REQUEST: ParseResult = Object.freeze({ ok: false, code: ErrorCode.invalidRequest });

// ignoreBOM keeps a leading BOM as U+FEFF, which the grammar then rejects: the
// protocol wants bare JSON, and silently dropping bytes would hide client bugs.
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parses the bytes of one frame (LF removed; a trailing CR is whitespace). The
 * whole frame is decoded before parsing, so invalid UTF-8 anywhere is
 * `invalid_request` even if a depth error comes earlier. Throws only for a bad `maxDepth`.
 *
 * @param bytes the frame's bytes, which must be well-formed UTF-8 without a BOM.
 * @param maxDepth the most containers that may be open at once; a non-negative integer.
 */
export function parseFrame(bytes: Uint8Array, maxDepth: number = LIMITS.json_depth): ParseResult {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return INVALID_REQUEST;
  }
  return parse(text, maxDepth);
}

// Parsing is synchronous and never re-entered, so one module-level state serves
// every call without allocating a parser per frame.
let src = "";
let pos = 0;
/** Open containers, innermost last; `keys[i]` is the member key being parsed in `stack[i]` if it is an object. */
const stack: (JsonValue[] | JsonObject)[] = [];
const keys: string[] = [];

/** Thrown (as a bare string, so no stack trace is captured) to unwind on the first error. */
function fail(code: typeof ErrorCode.invalidFrame | typeof ErrorCode.invalidRequest = ErrorCode.invalidRequest): never {
  throw code;
}

function parse(text: string, maxDepth: number): ParseResult {
  if (!Number.isInteger(maxDepth) || maxDepth < 0) throw new RangeError("maxDepth must be a non-negative integer");
  src = text;
  pos = 0;
  let duplicate: DuplicateKey | null = null;
  const rootDuplicates: string[] = [];
  try {
    let value: JsonValue;
    skipWhitespace();
    for (;;) {
      // Read one value, or open a container and go back for its first member.
      const c = src.charCodeAt(pos);
      if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
        if (stack.length >= maxDepth) fail(ErrorCode.invalidFrame);
        pos++;
        skipWhitespace();
        if (c === 0x5b) {
          if (src.charCodeAt(pos) === 0x5d /* ] */) { pos++; value = []; }
          else { stack.push([]); continue; }
        } else if (src.charCodeAt(pos) === 0x7d /* } */) {
          pos++;
          value = Object.create(null) as JsonObject;
        } else {
          keys[stack.length] = parseKey();
          stack.push(Object.create(null) as JsonObject);
          continue;
        }
      } else {
        value = parseScalar(c);
      }
      // Store the value in its container; close containers as far as possible.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) {
          skipWhitespace();
          if (pos !== src.length) fail();
          return { ok: true, value, duplicate, rootDuplicates };
        }
        skipWhitespace();
        const next = src.charCodeAt(pos++);
        if (Array.isArray(top)) {
          top.push(value);
          if (next === 0x2c /* , */) break;
          if (next !== 0x5d /* ] */) fail();
        } else {
          const key = keys[stack.length - 1] as string;
          // Values are never undefined, so this is an own-key test; keep the first value.
          if (top[key] === undefined) top[key] = value;
          else {
            if (stack.length === 1) rootDuplicates.push(key);
            if (duplicate === null || (stack.length === 1 && duplicate.path.length > 0)) {
              // A root-level duplicate outranks a nested one: it decides how the frame is rejected.
              duplicate = { path: pathTo(stack.length - 1), key };
            }
          }
          if (next === 0x2c /* , */) {
            skipWhitespace();
            keys[stack.length - 1] = parseKey();
            break;
          }
          if (next !== 0x7d /* } */) fail();
        }
        value = stack.pop() as JsonValue;
      }
      skipWhitespace();
    }
  } catch (e) {
    if (e === ErrorCode.invalidFrame) return INVALID_FRAME;
    if (e === ErrorCode.invalidRequest) return INVALID_REQUEST;
    throw e;
  } finally {
    // Drop references so a large frame is not retained until the next parse.
    src = "";
    stack.length = 0;
    keys.length = 0;
  }
}

/** The path to `stack[level]`: built only when a duplicate is found, so the common case allocates nothing. */
function pathTo(level: number): (string | number)[] {
  const path: (string | number)[] = [];
  for (let i = 0; i < level; i++) {
    const container = stack[i];
    // An array's pending element index is its current length.
    path.push(Array.isArray(container) ? container.length : keys[i] as string);
  }
  return path;
}

function skipWhitespace(): void {
  let c = src.charCodeAt(pos);
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = src.charCodeAt(++pos);
}

/** Parses `"key"` `:` and the whitespace after it, leaving `pos` on the member value. */
function parseKey(): string {
  if (src.charCodeAt(pos) !== 0x22 /* " */) fail();
  const key = parseString();
  skipWhitespace();
  if (src.charCodeAt(pos++) !== 0x3a /* : */) fail();
  skipWhitespace();
  return key;
}

function parseScalar(c: number): JsonValue {
  switch (c) {
    case 0x22: return parseString();
    case 0x74: return literal("true", true);
    case 0x66: return literal("false", false);
    case 0x6e: return literal("null", null);
    default: return parseNumber();
  }
}

function literal<T extends JsonValue>(word: string, value: T): T {
  if (!src.startsWith(word, pos)) fail();
  pos += word.length;
  return value;
}

/** Two comparisons, so NaN (read past the end) is never a digit. */
function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** RFC 8259 `number`; validated by hand because `Number()` accepts far more. */
function parseNumber(): number {
  const start = pos;
  let c = src.charCodeAt(pos);
  if (c === 0x2d /* - */) c = src.charCodeAt(++pos);
  if (c === 0x30) c = src.charCodeAt(++pos);
  else if (isDigit(c)) do c = src.charCodeAt(++pos); while (isDigit(c));
  else fail();
  if (c === 0x2e /* . */) {
    if (!isDigit(c = src.charCodeAt(++pos))) fail();
    do c = src.charCodeAt(++pos); while (isDigit(c));
  }
  if (c === 0x65 || c === 0x45 /* e E */) {
    c = src.charCodeAt(++pos);
    if (c === 0x2b || c === 0x2d /* + - */) c = src.charCodeAt(++pos);
    if (!isDigit(c)) fail();
    do c = src.charCodeAt(++pos); while (isDigit(c));
  }
  const n = Number(src.slice(start, pos));
  // Infinity has no JSON form; accepting it would make the value unrepresentable on the way out.
  if (n === Infinity || n === -Infinity) fail();
  return n;
}

/** Parses a string at `pos` (on the opening quote); escape-free strings cost one `slice`. */
function parseString(): string {
  const start = ++pos;
  for (;;) {
    const c = src.charCodeAt(pos);
    if (c === 0x22) return src.slice(start, pos++);
    if (c === 0x5c /* \ */) return parseEscapedString(start);
    if (!(c >= 0x20)) fail(); // control character, or NaN at end of text
    pos++;
  }
}

/** Escapes indexed by the char code after `\` (holes are invalid); each pair below is "escape letter, meaning". */
const SIMPLE_ESCAPES: (string | undefined)[] = [];
for (const [from, to] of ["\"\"", "\\\\", "//", "b\b", "f\f", "n\n", "r\r", "t\t"]) SIMPLE_ESCAPES[from!.charCodeAt(0)] = to;

/** The slow path: appends escape-free runs with one `slice` each, so cost is per escape, not per character. */
function parseEscapedString(start: number): string {
  let out = "";
  let run = start;
  for (;;) {
    const c = src.charCodeAt(pos);
    if (c === 0x22) return out + src.slice(run, pos++);
    if (c === 0x5c) {
      out += src.slice(run, pos);
      const e = src.charCodeAt(pos + 1);
      if (e === 0x75 /* u */) {
        const unit = hex4(pos + 2);
        pos += 6;
        if (unit >= 0xdc00 && unit <= 0xdfff) fail(); // low half without a high half
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // A high half must be followed at once by an escaped low half.
          if (src.charCodeAt(pos) !== 0x5c || src.charCodeAt(pos + 1) !== 0x75) fail();
          const low = hex4(pos + 2);
          if (low < 0xdc00 || low > 0xdfff) fail();
          pos += 6;
          out += String.fromCharCode(unit, low);
        } else {
          out += String.fromCharCode(unit);
        }
      } else {
        out += SIMPLE_ESCAPES[e] ?? fail();
        pos += 2;
      }
      run = pos;
      continue;
    }
    if (!(c >= 0x20)) fail();
    pos++;
  }
}

/** Four hex digits at `at` as a number; fails on anything else. */
function hex4(at: number): number {
  let n = 0;
  for (let i = at; i < at + 4; i++) {
    const c = src.charCodeAt(i);
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else fail();
    n = n * 16 + d;
  }
  return n;
}
