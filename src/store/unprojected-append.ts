/**
 * The attachment after an append of records that project nothing (a
 * `session_title`) outside a turn: the same projection, so the same
 * revision and snapshot, now describing the longer file. A client paging
 * with the revision `run.finished` gave it keeps paging: the history it
 * names did not change, only metadata after it was stored.
 *
 * @module
 */

import type { FileInfo, Runtime } from "../host/runtime.ts";
import type { Attachment } from "./attachment.ts";
import type { SessionRecord } from "./records.ts";
import { sameObject } from "./session-file.ts";
import { foldMetadata } from "./session-metadata.ts";
import type { JournalWrites } from "./turn-journal.ts";

/** Record types whose append leaves the projection as it was. */
const UNPROJECTED: ReadonlySet<SessionRecord["type"]> = new Set(["session_title"]);

/** Whether every one of `records` projects nothing. */
export function projectsNothing(records: readonly SessionRecord[]): boolean {
  return records.every((record) => UNPROJECTED.has(record.type));
}

/**
 * `attachment` with `writes` (records that project nothing) taken in, or
 * null when the file at `path` is not exactly the attachment's file plus
 * those writes: then something else changed it, and the attachment must
 * go stale like after any change underneath.
 */
export async function withUnprojected(runtime: Runtime, path: string, attachment: Attachment, writes: JournalWrites): Promise<Attachment | null> {
  const file = attachment.file;
  if (file === null || attachment.lines === null || attachment.stale || !projectsNothing(writes.records)) return null;
  let info: FileInfo;
  try {
    info = await runtime.fs.lstat(path);
  } catch {
    return null;
  }
  if (!sameObject(info, writes.identity) || info.size !== writes.intactLength || info.dev !== file.dev || info.ino !== file.ino) return null;
  return {
    ...attachment,
    file: { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs },
    intactLength: writes.intactLength,
    lines: attachment.lines + writes.records.length,
    metadata: foldMetadata(writes.records, attachment.metadata),
  };
}
