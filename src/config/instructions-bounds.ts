/**
 * The bounds of the instructions chain (`docs/features/runner.md#bounds`):
 * each file at most {@link MAX_INSTRUCTION_BYTES}, the whole instructions
 * section of the system prompt (`instructions-section.ts`: texts, headings
 * and notices) at most {@link MAX_INSTRUCTIONS_TOTAL_BYTES}, of which
 * {@link GLOBAL_INSTRUCTIONS_SHARE} only the user's own files may use. The
 * nearest files are served first so the text that wins is the text kept; a
 * cut file keeps its first bytes, cut at a character boundary, followed by
 * {@link TRUNCATION_NOTICE}, so the model knows the text is incomplete.
 *
 * @module
 */

import { sha256Hex } from "../util/digest.ts";
import { utf8ByteCount } from "../util/utf8.ts";
import { instructionHeading, INSTRUCTIONS_ORDER, type InstructionSource, SECTION_SEPARATOR } from "./instructions-section.ts";

/** Largest part of one instructions file used, in bytes. */
export const MAX_INSTRUCTION_BYTES = 32_768;

/** Largest instructions section of the system prompt, in bytes: texts, headings and notices. */
export const MAX_INSTRUCTIONS_TOTAL_BYTES = 65_536;

/** The part of {@link MAX_INSTRUCTIONS_TOTAL_BYTES} only the user's global files may use. */
export const GLOBAL_INSTRUCTIONS_SHARE = 16_384;

/** The line appended to a file cut at a bound. */
export const TRUNCATION_NOTICE =
  `\n[magi-code: this instructions file was cut at magi-code's bound (${MAX_INSTRUCTION_BYTES} bytes per file, ${MAX_INSTRUCTIONS_TOTAL_BYTES} in all); the rest was not read]\n`;

/** One instructions file's text and where it came from. */
export interface Instruction {
  readonly source: InstructionSource;
  /** The absolute path it was read at (a symlink's own path, not its target). */
  readonly path: string;
  /** The decoded text, possibly cut and then ending in {@link TRUNCATION_NOTICE}, in the first file kept possibly opening with {@link omissionNotice}; never blank. */
  readonly text: string;
  /** SHA-256 (lowercase hex) of the bytes used: the file's first {@link bytes} bytes. */
  readonly sha256: string;
  /** How many of the file's bytes were used. */
  readonly bytes: number;
}

const decoder = new TextDecoder("utf-8", { fatal: false });

/** Where to cut `bytes` at most `limit` long: before a character split by the limit. */
function cutPoint(bytes: Uint8Array, limit: number): number {
  if (bytes.length <= limit) return bytes.length;
  let cut = limit;
  // A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes can follow the cut.
  for (let back = 0; back < 3 && cut > 0 && (bytes[cut]! & 0xc0) === 0x80; back++) cut--;
  return (bytes[cut]! & 0xc0) === 0x80 ? limit : cut;
}

/** One file read, before the total bound is applied. */
export interface Candidate {
  readonly source: InstructionSource;
  readonly path: string;
  readonly bytes: Uint8Array;
  /** The user's own (the global file, a global path), served from its own share. */
  readonly global: boolean;
}

/** The line opening the first file kept when `count` files were left out. */
export function omissionNotice(count: number): string {
  return `[magi-code: ${count} more general instructions file(s) left out: the ${MAX_INSTRUCTIONS_TOTAL_BYTES}-byte bound on all instructions had no room for them]\n`;
}

/**
 * The longest part of `bytes` whose text (with {@link TRUNCATION_NOTICE}
 * when cut) takes at most `room` bytes, or null when not one byte fits.
 * Invalid UTF-8 decodes to U+FFFD, three bytes for one, so the text is
 * measured, not the bytes, and the cut moved back by the excess until it fits.
 */
function take(bytes: Uint8Array, room: number): { readonly used: Uint8Array; readonly text: string } | null {
  let limit = Math.min(MAX_INSTRUCTION_BYTES, room);
  while (limit > 0) {
    const cut = cutPoint(bytes, limit);
    const used = bytes.subarray(0, cut);
    const text = decoder.decode(used) + (cut < bytes.length ? TRUNCATION_NOTICE : "");
    const over = utf8ByteCount(text) - room;
    if (over <= 0) return cut === 0 ? null : { used, text };
    limit -= over;
  }
  return null;
}

/**
 * Fits `candidates` (in prompt order) into {@link MAX_INSTRUCTIONS_TOTAL_BYTES}
 * less `reserve`, as the section `instructions-section.ts` writes (opening
 * line, headings, separators, notices). Project files are served first,
 * the nearest first, from all but {@link GLOBAL_INSTRUCTIONS_SHARE}; then
 * the user's own, the nearest first, from what is left, so a repository's
 * text can never crowd out the user's. A file with no room left is null.
 */
function fit(candidates: readonly Candidate[], reserve: number): ({ readonly used: Uint8Array; readonly text: string } | null)[] {
  const out: ({ readonly used: Uint8Array; readonly text: string } | null)[] = candidates.map(() => null);
  let left = MAX_INSTRUCTIONS_TOTAL_BYTES - utf8ByteCount(INSTRUCTIONS_ORDER) - reserve;
  const nearestFirst = [...candidates.keys()].reverse();
  for (const index of [...nearestFirst.filter((i) => !candidates[i]!.global), ...nearestFirst.filter((i) => candidates[i]!.global)]) {
    const candidate = candidates[index]!;
    const overhead = 2 * utf8ByteCount(SECTION_SEPARATOR) + utf8ByteCount(instructionHeading(candidate.source, candidate.path));
    const room = (candidate.global ? left : left - GLOBAL_INSTRUCTIONS_SHARE) - overhead;
    const taken = take(candidate.bytes, room);
    if (taken === null) continue;
    out[index] = taken;
    left -= overhead + utf8ByteCount(taken.text);
  }
  return out;
}

/**
 * Applies the bounds to `candidates` (in prompt order): each file at most
 * {@link MAX_INSTRUCTION_BYTES}, the whole section at most
 * {@link MAX_INSTRUCTIONS_TOTAL_BYTES} ({@link fit}). A file the total has
 * no room for is left out, heading and all, and one
 * {@link omissionNotice} opening the first file kept says how many were.
 */
export async function bounded(candidates: readonly Candidate[]): Promise<Instruction[]> {
  let fitted = fit(candidates, 0);
  // Room for the notice is taken only when it is needed; its count never has more digits than the candidates'.
  if (fitted.includes(null)) fitted = fit(candidates, utf8ByteCount(omissionNotice(candidates.length)));
  const omitted = fitted.filter((taken) => taken === null).length;
  const out: Instruction[] = [];
  for (const [index, taken] of fitted.entries()) {
    if (taken === null) continue;
    const candidate = candidates[index]!;
    const text = (omitted > 0 && out.length === 0 ? omissionNotice(omitted) : "") + taken.text;
    out.push({ source: candidate.source, path: candidate.path, text, sha256: await sha256Hex(taken.used), bytes: taken.used.length });
  }
  return out;
}

