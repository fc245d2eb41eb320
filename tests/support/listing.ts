/**
 * Fixtures for the session listing tests: stored histories with a cwd, a
 * title and timestamps of the test's choosing, and a {@link SessionListing}
 * or {@link SessionDiscovery} over a memory runtime's real sessions
 * directory, for tests that exercise discovery without a protocol
 * connection around it.
 *
 * @module
 */

import type { MemoryRuntime } from "../../runtime/memory.ts";
import { SessionDiscovery } from "../../src/store/discovery/discovery.ts";
import { SessionListing } from "../../src/store/discovery/listing.ts";
import { encodeRecord, type SessionRecord } from "../../src/store/records.ts";

/** The memory runtime's default cwd and sessions directory (`$HOME/.magi-code/sessions`). */
export const CWD = "/work/project";
export const SESSIONS = "/home/user/.magi-code/sessions";

const decoder = new TextDecoder();

/** What a stored history holds besides one completed turn. */
export interface StoredOptions {
  /** The recorded cwd; null writes a legacy `session` record without one (default {@link CWD}). */
  readonly cwd?: string | null;
  /** The timestamp of every record but the last (default 2026-01-01). */
  readonly at?: string;
  /** The last record's timestamp (default `at`). */
  readonly lastAt?: string;
  /** A `session_title` record's title, written after the turn. */
  readonly title?: string;
  /** A prompt text (never a title). */
  readonly prompt?: string;
}

/** The records of one stored session: its `session` record and one completed turn. */
export function storedRecords(id: string, options: StoredOptions = {}): SessionRecord[] {
  const at = options.at ?? "2026-01-01T00:00:00.000Z";
  const cwd = options.cwd === undefined ? CWD : options.cwd;
  const records: SessionRecord[] = [
    { v: 1, type: "session", session_id: id, at, created_at: at, ...(cwd === null ? {} : { cwd }) } as SessionRecord,
    { v: 1, type: "turn_started", session_id: id, at, turn_id: "t0", run_id: "run0" },
    { v: 1, type: "user_input", session_id: id, at, turn_id: "t0", message_id: "u0", text: options.prompt ?? "Fix the bug" },
    { v: 1, type: "assistant_message", session_id: id, at, turn_id: "t0", message_id: "a0", text: "Done.", partial: false },
  ];
  if (options.title !== undefined) records.push({ v: 1, type: "session_title", session_id: id, at, title: options.title });
  records.push({ v: 1, type: "turn_finished", session_id: id, at: options.lastAt ?? at, turn_id: "t0", outcome: "completed", error_code: null });
  return records;
}

/** The stored text of `records`. */
export function storedText(records: readonly SessionRecord[]): string {
  return records.map((record) => decoder.decode(encodeRecord(record)!)).join("");
}

/** Writes `<SESSIONS>/<id>.jsonl` (mode 0600 unless given). */
export function writeSession(runtime: MemoryRuntime, id: string, options: StoredOptions = {}, mode = 0o600): void {
  runtime.fs.writeFile(`${SESSIONS}/${id}.jsonl`, storedText(storedRecords(id, options)), mode);
}

/** A listing of the memory runtime's sessions directory (created 0700, as startup does), as a ready child has it. */
export async function listingFor(
  runtime: MemoryRuntime,
  attached: () => string | null = () => null,
  secrets: readonly string[] = [],
): Promise<SessionListing> {
  await runtime.fs.mkdir(SESSIONS, 0o700);
  return new SessionListing({ runtime, directory: SESSIONS, cwd: CWD, secrets, attached });
}

/** A `session.discover` pass holder over the same directory, as a ready child has it. */
export async function discoveryFor(runtime: MemoryRuntime, attached: () => string | null = () => null, windowIds?: number): Promise<SessionDiscovery> {
  await runtime.fs.mkdir(SESSIONS, 0o700);
  return new SessionDiscovery({ runtime, directory: SESSIONS, cwd: CWD, secrets: [], attached }, windowIds);
}

/**
 * The stored text of a valid history of session `id` that is exactly `bytes`
 * bytes and `lines` lines long (at least two): its `session` record, then
 * `session_title` records, the last one padded to the size.
 */
export function sizedText(id: string, bytes: number, lines: number): string {
  const at = "2026-01-01T00:00:00.000Z";
  const head = storedText([{ v: 1, type: "session", session_id: id, at, created_at: at, cwd: CWD }]);
  const title = (text: string) => storedText([{ v: 1, type: "session_title", session_id: id, at, title: text }]);
  const filler = title("").repeat(lines - 2);
  const pad = bytes - head.length - filler.length - title("").length;
  if (pad < 0) throw new Error(`${bytes} bytes cannot hold ${lines} lines`);
  return head + filler + title("x".repeat(pad));
}
