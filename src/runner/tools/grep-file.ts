/**
 * One file's share of a `grep` call: read a bounded prefix, skip it if it is
 * binary, and append `path:line: text` for each matching line while the
 * call's shared budgets (matches, output bytes, bytes read, wall time) last.
 *
 * @module
 */

import type { FileSystem, ReadHandle } from "../../host/runtime.ts";
import { clampUtf8, utf8ByteCount } from "../../util/utf8.ts";
import { displayName } from "./tool-text.ts";

/** The budgets of one search. */
export interface SearchLimits {
  /** Most matching lines reported. */
  readonly matches: number;
  /** Most bytes of match lines. */
  readonly outputBytes: number;
  /** Most bytes read from one file; the rest of a larger file is not searched. */
  readonly fileBytes: number;
  /** Most bytes read overall. */
  readonly totalBytes: number;
  /** Wall-time budget of the whole search. */
  readonly deadlineMs: number;
}

/** Why a search stopped early. */
export type SearchStop = "matches" | "output" | "bytes" | "time";

/** Running counts of a search, shared by every file in it. */
export interface SearchTally {
  /** Matching lines reported. */
  matches: number;
  /** Files with at least one reported match. */
  matchedFiles: number;
  /** Files read. */
  files: number;
  /** Files skipped as binary. */
  binary: number;
  /** Files searched only in their first `fileBytes`. */
  partial: number;
  /** Files skipped because they have more than one hard link. */
  linked: number;
  /** Files that could not be opened or read. */
  unreadable: number;
  /** Bytes of match lines so far. */
  outputBytes: number;
  /** Bytes read so far. */
  readBytes: number;
  /** Why the search stopped early, once it has. */
  stop: SearchStop | null;
}

/** One file to search. */
export interface SearchJob {
  readonly fs: FileSystem;
  /** Canonical path. */
  readonly path: string;
  /** Workspace-relative path, as printed. */
  readonly shown: string;
  /** Whether a file with more than one hard link is searched (the user approved it) rather than skipped. */
  readonly hardLinks: boolean;
  /** The compiled pattern; `test` looks for a match anywhere in the line. */
  readonly regex: { test(input: string): boolean };
  /** The search's budgets. */
  readonly limits: SearchLimits;
  /** The search's shared counts, updated in place. */
  readonly tally: SearchTally;
  /** Where match lines are appended. */
  readonly lines: string[];
  /** `now()` value after which the search stops. */
  readonly deadline: number;
  /** Monotonic milliseconds. */
  now(): number;
}

/** Longest matching line shown, in UTF-8 bytes; minified files have megabyte lines. */
export const MAX_LINE_DISPLAY_BYTES = 500;

/**
 * Characters of a line the pattern sees. RE2 is linear, but in line length
 * times program size: `\p{L}{1000}` costs about 12 ms per 1,000 characters,
 * so an unbounded megabyte line could overrun the deadline by a minute
 * before the next check. A match further into a minified line is missed.
 */
export const MAX_MATCH_LINE_CHARS = 16_384;

const BINARY_SNIFF_BYTES = 8192;

/** Reads up to `limit` bytes from the start of an open file. */
async function readPrefix(handle: ReadHandle, size: number, limit: number): Promise<{ bytes: Uint8Array; partial: boolean }> {
  const buffer = new Uint8Array(Math.min(size, limit));
  let length = 0;
  while (length < buffer.length) {
    const read = await handle.read(buffer.subarray(length), length);
    if (read === 0) break;
    length += read;
  }
  return { bytes: buffer.subarray(0, length), partial: size > limit };
}

/** Searches `job.path`, updating `job.tally` and appending to `job.lines`. */
export async function searchFile(job: SearchJob): Promise<void> {
  const { tally, limits } = job;
  if (tally.stop !== null) return;
  if (job.now() > job.deadline) {
    tally.stop = "time";
    return;
  }
  const room = limits.totalBytes - tally.readBytes;
  if (room <= 0) {
    tally.stop = "bytes";
    return;
  }
  let prefix: { bytes: Uint8Array; partial: boolean };
  try {
    const handle = await job.fs.openRead(job.path);
    try {
      const info = await handle.stat();
      if (info.nlink > 1 && !job.hardLinks) {
        tally.linked++;
        return;
      }
      prefix = await readPrefix(handle, info.size, Math.min(limits.fileBytes, room));
    } finally {
      await handle.close().catch(() => {});
    }
  } catch {
    tally.unreadable++;
    return;
  }
  tally.files++;
  tally.readBytes += prefix.bytes.length;
  if (prefix.bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
    tally.binary++;
    return;
  }
  if (prefix.partial) {
    if (room < limits.fileBytes) tally.stop = "bytes";
    else tally.partial++;
  }
  const text = new TextDecoder().decode(prefix.bytes);
  const shown = displayName(job.shown);
  let matchedHere = false;
  for (let start = 0, number = 1; start < text.length; number++) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    const line = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
    start = end + 1;
    // Checked every line: a clock read costs far less than the cheapest match.
    if (job.now() > job.deadline) {
      tally.stop = "time";
      return;
    }
    if (!job.regex.test(line.length > MAX_MATCH_LINE_CHARS ? line.slice(0, MAX_MATCH_LINE_CHARS) : line)) continue;
    const entry = `${shown}:${number}: ${clampUtf8(line, MAX_LINE_DISPLAY_BYTES)}`;
    const size = utf8ByteCount(entry) + 1;
    if (tally.outputBytes + size > limits.outputBytes) {
      tally.stop = "output";
      return;
    }
    job.lines.push(entry);
    tally.outputBytes += size;
    tally.matches++;
    if (!matchedHere) {
      matchedHere = true;
      tally.matchedFiles++;
    }
    if (tally.matches >= limits.matches) {
      tally.stop = "matches";
      return;
    }
  }
}
