/**
 * The scalar checks every stored record runs on open, written so they
 * allocate nothing (but the date of a timestamp, once per day seen): a
 * 64 MiB history holds ~100,000 records, and the straightforward forms
 * (`TextEncoder` to count bytes, two `Date`s per timestamp) cost a fifth of
 * the parse. Each function answers exactly what
 * the straightforward form would; `tests/record-checks.test.ts` checks that
 * against the originals.
 *
 * @module
 */

import { utf8ByteCount } from "../util/utf8.ts";

/**
 * Whether `text` encodes to between `min` and `max` UTF-8 bytes. A string of
 * n code units encodes to between n and 3n bytes, so most strings are
 * decided by their length alone and never counted.
 */
export function utf8BytesWithin(text: string, min: number, max: number): boolean {
  const units = text.length;
  if (units > max || units * 3 < min) return false;
  if (units >= min && units * 3 <= max) return true;
  const bytes = utf8ByteCount(text);
  return bytes >= min && bytes <= max;
}

// Proleptic Gregorian, as `Date` computes it; February is settled separately.
const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
// The fixed characters of the format in place; each `d` stands for one ASCII digit.
const TIMESTAMP_SHAPE = "dddd-dd-ddTdd:dd:dd.dddZ";
const DIGIT_SLOT = 0x64; // "d"
/** `YYYY-MM-DDT`: what decides whether the day is real. */
const DATE_UNITS = 11;
// The date part (with its `T`) of the last timestamp found valid, or empty before the first.
let provenDate = "";

/** The value of `count` ASCII digits at `at`; the caller has checked they are digits. */
function digits(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) value = value * 10 + text.charCodeAt(i) - 0x30;
  return value;
}

/** Whether `year` has a 29 February in the proleptic Gregorian calendar (year 0 does). */
function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * Whether `text` is exactly what `Date.prototype.toISOString` writes for some
 * instant in years 0000–9999: `YYYY-MM-DDTHH:MM:SS.sssZ` naming a real
 * calendar day and a time before 24:00 without a leap second. This is the
 * same answer as `new Date(Date.parse(text)).toISOString() === text`.
 */
export function isIsoTimestamp(text: string): boolean {
  if (text.length !== TIMESTAMP_SHAPE.length) return false;
  // A history's records mostly share their day: one already proven leaves only the time to check.
  const dated = provenDate !== "" && text.startsWith(provenDate);
  for (let i = dated ? DATE_UNITS : 0; i < TIMESTAMP_SHAPE.length; i++) {
    const unit = text.charCodeAt(i);
    const shape = TIMESTAMP_SHAPE.charCodeAt(i);
    if (shape === DIGIT_SLOT ? unit < 0x30 || unit > 0x39 : unit !== shape) return false;
  }
  if (!(digits(text, 11, 2) < 24 && digits(text, 14, 2) < 60 && digits(text, 17, 2) < 60)) return false;
  if (dated) return true;
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month - 1]!) return false;
  if (month === 2 && day === 29 && !isLeapYear(digits(text, 0, 4))) return false;
  provenDate = text.slice(0, DATE_UNITS);
  return true;
}

/**
 * Whether `line` holds at most `max` container openers (`{`, `[`), strings
 * included: then `JSON.parse` can build at most `max` arrays and objects
 * from it, however they nest. Each `indexOf` is a native search, so a line
 * with few brackets is decided without a character loop.
 */
export function containersWithin(line: string, max: number): boolean {
  if (line.length <= max) return true; // cannot hold more openers than characters
  let count = 0;
  for (let at = line.indexOf("{"); at !== -1; at = line.indexOf("{", at + 1)) if (++count > max) return false;
  for (let at = line.indexOf("["); at !== -1; at = line.indexOf("[", at + 1)) if (++count > max) return false;
  return true;
}

/**
 * How deeply the containers of `line`, a JSON text, nest (the outermost
 * object is depth 1), counted no further than `limit + 1`. A linear scan that
 * skips strings, run before `JSON.parse`, which would otherwise build
 * millions of nested arrays from a hostile line before any bound could
 * refuse it.
 */
export function nestingDepth(line: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const unit = line.charCodeAt(i);
    if (inString) {
      if (unit === 0x5c /* \ */) i++;
      else if (unit === 0x22 /* " */) inString = false;
    } else if (unit === 0x22) {
      inString = true;
    } else if (unit === 0x7b /* { */ || unit === 0x5b /* [ */) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (unit === 0x7d /* } */ || unit === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}
