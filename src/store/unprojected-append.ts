/**
 * The attachment after an append of records that project nothing (a
 * `session_title`) outside a turn: the same projection, so the same
 * revision and snapshot, now describing the longer file. A client paging
 * with the revision `run.finished` gave it keeps paging: the history it
 * names did not change, only metadata after it was stored. When such an
 * append fails, the fragment a cut-short write may have left is cut again
 * at once, so the file is once more exactly what the attachment describes.
 *
 * @module
 */

import type { FileInfo, Runtime } from "../host/runtime.ts";
import { SessionAppender } from "./appender.ts";
import type { Attachment } from "./attachment.ts";
import { sameState } from "./history-file-ops.ts";
import type { SessionRecord } from "./records.ts";
import { sameObject } from "./session-file.ts";
import { foldMetadata } from "./session-metadata.ts";
import type { JournalWrites } from "./turn-journal.ts";

/** Record types whose append leaves the projection as it was. */
const UNPROJECTED: ReadonlySet<SessionRecord["type"]> = new Set(["session_title"]);

/** Whether every one of `records` projects nothing. */
function projectsNothing(records: readonly SessionRecord[]): boolean {
  return records.every((record) => UNPROJECTED.has(record.type));
}

/**
 * `attachment` after an append outside a turn of records that project
 * nothing, called while the appending journal still holds the active
 * lease: with the acknowledged `writes` taken in, or, when none was
 * acknowledged, without the fragment a failed write may have left. Stale
 * when the file turns out changed otherwise, as after any change underneath.
 */
export async function afterUnprojected(runtime: Runtime, path: string, attachment: Attachment, writes: JournalWrites | null): Promise<Attachment> {
  if (writes === null) return await withoutFragment(runtime, path, attachment);
  return (await withUnprojected(runtime, path, attachment, writes)) ?? { ...attachment, stale: true };
}

/**
 * `attachment` with `writes` (records that project nothing) taken in, or
 * null when the file at `path` is not exactly the attachment's file plus
 * those writes.
 */
async function withUnprojected(runtime: Runtime, path: string, attachment: Attachment, writes: JournalWrites): Promise<Attachment | null> {
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

/**
 * `attachment` after an append outside a turn that was not acknowledged:
 * unchanged when the file is untouched; when the write left a fragment after
 * the attachment's last complete line, the fragment is cut (as any appender
 * repairs a torn tail) and the attachment takes in the file's new
 * modification time; stale when anything else changed the file.
 */
async function withoutFragment(runtime: Runtime, path: string, attachment: Attachment): Promise<Attachment> {
  const file = attachment.file;
  const stale = { ...attachment, stale: true };
  if (file === null || attachment.intactLength === null || attachment.stale) return attachment;
  try {
    if (sameState(await runtime.fs.lstat(path), file)) return attachment;
    const opened = await SessionAppender.open(runtime.fs, path, attachment.sessionId, { create: false, expectedIntactLength: attachment.intactLength });
    if (!opened.ok) return stale;
    await opened.appender.close();
    const info = await runtime.fs.lstat(path);
    if (!sameState(info, { ...file, size: attachment.intactLength, mtimeMs: info.mtimeMs })) return stale;
    return { ...attachment, file: { dev: info.dev, ino: info.ino, size: info.size, mtimeMs: info.mtimeMs } };
  } catch {
    return stale;
  }
}
