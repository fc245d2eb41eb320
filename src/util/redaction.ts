/**
 * Screening for names and text that leave the process: the one home of
 * redaction and of the display-safety rules for names and ids.
 *
 * The wire contract says provider/model names are bounded to 256 bytes and
 * reported as `null` when they are control-bearing or secret-like, and that no
 * token ever reaches a client. Both rules need the same notion of "looks like a
 * credential", so it lives here once: {@link isSafeDisplayName} gates short
 * identifiers, {@link redactSecrets} scrubs free text.
 *
 * @module
 */

import { hasLoneSurrogate, utf8ByteCount } from "./utf8.ts";

/** Longest display name, in UTF-8 bytes, that the wire contract admits. */
export const MAX_DISPLAY_NAME_BYTES = 256;

/** What replaces every secret {@link redactSecrets} finds. */
export const REDACTION_MARKER = "[redacted]";

/** Known secrets shorter than this are ignored: redacting "abc" everywhere would shred text. */
export const MIN_KNOWN_SECRET_LENGTH = 8;


// deno-lint-ignore no-control-regex -- matching controls is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
// deno-lint-ignore no-control-regex -- replacing controls is the point
const CONTROLS = /[\u0000-\u001F\u007F-\u009F]/g;

// Vendor prefixes are anchored on a token-class boundary: it keeps "task-..."
// from reading as "sk-...", and it lets each token run start a match at most
// once, so scanning stays linear on hostile input.
const BOUNDARY = "(?<![A-Za-z0-9_-])";
const VENDOR_PATTERNS: readonly RegExp[] = [
  new RegExp(`${BOUNDARY}sk-[A-Za-z0-9_-]{16,}`, "g"), // OpenAI/Anthropic, incl. sk-ant-, sk-proj-
  new RegExp(`${BOUNDARY}(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}`, "g"),
  new RegExp(`${BOUNDARY}xox[abposr]-[A-Za-z0-9-]{8,}`, "g"),
  new RegExp(`${BOUNDARY}AKIA[0-9A-Z]{16}`, "g"),
  new RegExp(`${BOUNDARY}AIza[0-9A-Za-z_-]{35}`, "g"),
  new RegExp(`${BOUNDARY}eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+`, "g"), // JWT
];
// A lookbehind, case-insensitive (auth schemes are): every token after a scheme is replaced,
// also in "Bearer Bearer tok", where a consuming pattern would swallow the second scheme.
const BEARER = /(?<=Bearer[ \t]+)[A-Za-z0-9._~+/=-]+/gi;
const TOKEN_RUN = /[A-Za-z0-9+/_=-]{32,}/g;
const SCHEME = /Bearer\s/i;
// `scheme://user:secret@host`, as git remotes in `.git/config` often hold them: the password
// (up to the authority's last `@`) is replaced, the user and host stay readable. The scheme starts
// only at a run boundary and the password stops at the first `/`, so every scan stays short.
const URL_CREDENTIAL = /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:]*:)[^\s/?#]+@/g;

/**
 * Whether a long token run is credential-shaped. Every such run must mix
 * letters and digits, and additionally one segment between `-`, `_` or `/`
 * must be 16+ characters and mix them too. The second condition is a
 * deliberate narrowing: hub-style model ids such as
 * `meta-llama/Meta-Llama-3-8B-Instruct` and UUIDs are long mixed runs made of
 * short words, while keys and hashes are long unbroken high-entropy segments.
 */
function isSecretRun(run: string): boolean {
  return run.split(/[-_/]/).some((part) => part.length >= 16 && /[A-Za-z]/.test(part) && /[0-9]/.test(part));
}

/** Whether `text` holds a C0, DEL or C1 control character. */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/** `text` with every C0, DEL and C1 control character replaced by `replacement`. */
export function replaceControls(text: string, replacement: string): string {
  return text.replace(CONTROLS, replacement);
}

/**
 * Whether `text` can be echoed as is: free of controls and well-formed (no
 * lone surrogate). Ids that are compared and echoed must be; free text need not.
 */
export function isPrintable(text: string): boolean {
  return !CONTROL.test(text) && !hasLoneSurrogate(text);
}

/**
 * Whether `name` may be shown to a client as a provider or model name: 1–256
 * UTF-8 bytes, well-formed, free of C0/DEL/C1 controls, and not shaped like a
 * credential. A `false` means "report null", never "fail".
 */
export function isSafeDisplayName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_DISPLAY_NAME_BYTES) return false;
  if (utf8ByteCount(name) > MAX_DISPLAY_NAME_BYTES) return false;
  if (!isPrintable(name)) return false;
  // A name has no reason to mention an authorization scheme at all.
  if (SCHEME.test(name)) return false;
  // Plain loops and module-level patterns: a catalog screens 4,096 names at once, and a closure,
  // a fresh literal and an empty array per call were most of its garbage.
  for (let index = 0; index < VENDOR_PATTERNS.length; index++) {
    if (name.search(VENDOR_PATTERNS[index]!) !== -1) return false;
  }
  const runs = name.match(TOKEN_RUN);
  return runs === null || !runs.some(isSecretRun);
}

/** Replaces every occurrence of each known secret, merging overlaps so no fragment survives. */
function redactKnown(text: string, knownSecrets: readonly string[]): string {
  const spans: Array<[number, number]> = [];
  for (const secret of new Set(knownSecrets)) {
    if (typeof secret !== "string" || secret.length < MIN_KNOWN_SECRET_LENGTH) continue;
    // Step by one so overlapping occurrences ("aaaa…") are all covered.
    for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
      spans.push([at, at + secret.length]);
    }
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let cursor = 0;
  let [start, end] = spans[0]!;
  for (const [s, e] of spans) {
    if (s <= end) {
      end = Math.max(end, e);
      continue;
    }
    out += text.slice(cursor, start) + REDACTION_MARKER;
    cursor = end;
    [start, end] = [s, e];
  }
  return out + text.slice(cursor, start) + REDACTION_MARKER + text.slice(end);
}

/** `value` with every string in it, at any depth, passed through {@link redactSecrets}. */
export function redactStrings(value: unknown, knownSecrets: readonly string[]): unknown {
  if (typeof value === "string") return redactSecrets(value, knownSecrets);
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, knownSecrets));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, knownSecrets)]));
  }
  return value;
}

/**
 * Longest unbroken token-like run the regular expressions are given: far
 * below the ~5.5 million characters where V8's backtracking stack overflows,
 * far above any text a person reads as words.
 */
export const MAX_SCANNED_RUN = 1_048_576;

function isTokenChar(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a) ||
    code === 0x2b || code === 0x2d || code === 0x2e || code === 0x2f || code === 0x3d || code === 0x5f || code === 0x7e;
}

/**
 * Replaces every unbroken token-like run longer than {@link MAX_SCANNED_RUN}
 * with the marker, by a linear scan. V8's backtracking engine overflows its
 * stack on multi-megabyte runs under `{n,}` quantifiers, and a megabyte
 * blob without a break (a base64 payload, a key file) is never useful
 * display text anyway.
 */
function redactHugeRuns(text: string): string {
  let out = "";
  let cursor = 0;
  let start = -1;
  for (let index = 0; index <= text.length; index++) {
    const inRun = index < text.length && isTokenChar(text.charCodeAt(index));
    if (inRun && start === -1) start = index;
    if (!inRun && start !== -1) {
      if (index - start > MAX_SCANNED_RUN) {
        out += text.slice(cursor, start) + REDACTION_MARKER;
        cursor = index;
      }
      start = -1;
    }
  }
  return cursor === 0 ? text : out + text.slice(cursor);
}

/** One pass of the shape-based rules. */
function redactPatterns(text: string): string {
  let out = redactHugeRuns(text);
  for (const pattern of VENDOR_PATTERNS) out = out.replace(pattern, REDACTION_MARKER);
  out = out.replace(BEARER, REDACTION_MARKER);
  out = out.replace(URL_CREDENTIAL, `$1${REDACTION_MARKER}@`);
  return out.replace(TOKEN_RUN, (run) => (isSecretRun(run) ? REDACTION_MARKER : run));
}

/**
 * Returns `text` with every known secret value (those of at least
 * {@link MIN_KNOWN_SECRET_LENGTH} characters) and every credential-shaped
 * token replaced by {@link REDACTION_MARKER}. Used on all outgoing text.
 *
 * Known values go first, on the original text, so a pattern rewrite can never
 * split one and leave a readable fragment behind.
 */
export function redactSecrets(text: string, knownSecrets: readonly string[]): string {
  let out = redactKnown(text, knownSecrets);
  // A replacement can expose a fresh token boundary (for the vendor
  // lookbehinds), so repeat to a fixed point. Each changing pass removes
  // unredacted characters, so this terminates; the result is idempotent.
  for (;;) {
    const next = redactPatterns(out);
    if (next === out) return out;
    out = next;
  }
}
