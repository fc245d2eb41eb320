/**
 * File checkpoints for `session.rewind`'s `restore_files`: right before
 * `write_file` or `edit_file` changes a file, the content it is about to
 * replace (or that there was none) and a digest of what it writes are kept
 * under `$MC_HOME/checkpoints/<session id>/`, one owner-only file per write
 * (docs/features/local-agent-extensions.md, "session.rewind"). A rewind
 * puts back the content from before the dropped turns' first write of a
 * file, and only when the file still holds exactly what their last write
 * left: a file changed since, by hand or by anything else, is not touched.
 *
 * Taken only in a child whose client negotiated `session.rewind`: nobody
 * else can ever restore them. Bounded per session; past the bound a write
 * takes none, and its file cannot be restored.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { relativeTo } from "../policy/workspace-paths.ts";
import type { TakeCheckpoint } from "../runner/tools/tool.ts";
import { joinPath } from "../util/paths.ts";
import { uuid7 } from "../util/uuid7.ts";

/** Checkpoints kept per session at most. */
export const CHECKPOINTS_PER_SESSION = 256;
/** Bytes of checkpoints kept per session at most (each holds at most one file of `MAX_WRITE_BYTES`). */
export const CHECKPOINT_BYTES_PER_SESSION = 32 * 1024 * 1024;

/** One kept checkpoint. */
export interface Checkpoint {
  readonly turnId: string;
  /** Workspace-relative path of the file. */
  readonly path: string;
  /** The content before the write; null when the write created the file. */
  readonly before: Uint8Array | null;
  /** SHA-256 (hex) of what the write wrote. */
  readonly afterSha256: string;
}


const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The checkpoints of one child, in `home`, for files of `workspace`. */
export class Checkpoints {
  readonly #runtime: Runtime;
  readonly #home: string;
  readonly #workspace: string;

  /** Creates the store; nothing is written until a checkpoint is taken. */
  constructor(runtime: Runtime, home: string, workspace: string) {
    this.#runtime = runtime;
    this.#home = home;
    this.#workspace = workspace;
  }

  /** The canonical path of a workspace-relative `path`. */
  absolute(path: string): string {
    return joinPath(this.#workspace, path);
  }

  #directory(sessionId: string): string {
    return joinPath(this.#home, "checkpoints", sessionId);
  }

  /**
   * The checkpoint taker of one turn of one session. It never rejects: a
   * checkpoint that cannot be kept (over the bound, a full disk) is not
   * taken, and the write goes on without one.
   */
  taker(sessionId: string, turnId: string): TakeCheckpoint {
    return (path, before, after) => this.#take(sessionId, turnId, path, before, after).catch(() => {});
  }

  async #take(sessionId: string, turnId: string, path: string, before: Uint8Array | null, after: Uint8Array): Promise<void> {
    const fs = this.#runtime.fs;
    const directory = this.#directory(sessionId);
    await fs.mkdir(directory, 0o700);
    const entries = await fs.readDir(directory, CHECKPOINTS_PER_SESSION);
    if (entries.length >= CHECKPOINTS_PER_SESSION) return;
    let used = 0;
    for (const entry of entries) used += (await fs.lstat(joinPath(directory, entry.name))).size;
    const hash = this.#runtime.createSha256();
    hash.update(after);
    const header = encoder.encode(`${JSON.stringify({ v: 1, turn_id: turnId, path: relativeTo(this.#workspace, path), existed: before !== null, after_sha256: hash.digest() })}\n`);
    const body = new Uint8Array(header.length + (before?.length ?? 0));
    body.set(header);
    if (before !== null) body.set(before, header.length);
    if (used + body.length > CHECKPOINT_BYTES_PER_SESSION) return;
    // A UUIDv7 name sorts in the order the checkpoints were taken.
    await fs.createExclusive(joinPath(directory, `${uuid7(this.#runtime.wallNow(), this.#runtime.randomUUID())}.checkpoint`), body, 0o600);
  }

  /** The checkpoints of `sessionId` taken in `turns`, oldest first; unreadable ones are left out. */
  async of(sessionId: string, turns: ReadonlySet<string>): Promise<Checkpoint[]> {
    const fs = this.#runtime.fs;
    const directory = this.#directory(sessionId);
    const entries = await fs.readDir(directory, CHECKPOINTS_PER_SESSION).catch(() => []);
    const names = entries.filter((entry) => entry.kind === "file" && entry.name.endsWith(".checkpoint")).map((entry) => entry.name).sort();
    const out: Checkpoint[] = [];
    for (const name of names) {
      const bytes = await fs.readFile(joinPath(directory, name), CHECKPOINT_BYTES_PER_SESSION).catch(() => null);
      const parsed = bytes === null ? null : parse(bytes);
      if (parsed !== null && turns.has(parsed.turnId)) out.push(parsed);
    }
    return out;
  }
}

/** A checkpoint file's content, or null when it is not one this version wrote. */
function parse(bytes: Uint8Array): Checkpoint | null {
  const end = bytes.indexOf(0x0a);
  if (end < 0) return null;
  try {
    const header = JSON.parse(decoder.decode(bytes.subarray(0, end))) as Record<string, unknown>;
    if (header.v !== 1 || typeof header.turn_id !== "string" || typeof header.path !== "string" || typeof header.after_sha256 !== "string") return null;
    if (header.path === "" || header.path.startsWith("/") || header.path.split("/").includes("..")) return null;
    return { turnId: header.turn_id, path: header.path, before: header.existed === true ? bytes.slice(end + 1) : null, afterSha256: header.after_sha256 };
  } catch {
    return null;
  }
}
