/**
 * A real server on the memory runtime for the params properties: requests
 * sent as raw params JSON (so the kit's duplicate-key cases keep their
 * defect), answered one at a time, and a digest of the whole filesystem so
 * a property can claim that a rejected request wrote nothing.
 *
 * @module
 */

import { createSha256 } from "../../runtime/memory.ts";
import type { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import { paramsFrameBytes } from "../../src/fuzz/mod.ts";
import { joinPath } from "../../src/util/paths.ts";
import type { Frame, Run } from "./harness.ts";
import { request } from "./turns.ts";

const decoder = new TextDecoder();

/** Ids a child can still record before its ledger (4,096) is full, with room for setup requests. */
export const LEDGER_ROOM = 4_000;

let next = 0;

/** Sends `method` with params `json` under a fresh id and resolves with its response. */
export function callRaw(run: Run, method: string, json: string): Promise<Frame> {
  const id = `p${++next}`;
  return request(run, id, method, {}, () => decoder.decode(paramsFrameBytes(id, method, json)));
}

/** A lease file or a heartbeat's temporary copy of one (`<id>.<kind>.lease`, `<id>.<kind>.lease.<instance>.tmp`). */
export const LEASE_NAME = /\.lease(\.[^/]+\.tmp)?$/;

/**
 * Every node under `/` with its kind, mode, size, mtime, inode and (for
 * files) a SHA-256 of its contents: equal trees mean nothing was created,
 * removed, renamed, rewritten or touched. Leases are the exception: a
 * heartbeat (every 15 s, on the real clock these servers run on; a manual
 * clock would also stop the readers' yields) may rewrite one while a
 * property runs, which is no write of a request. So a lease counts by its
 * name, its temporary copy not at all, and the directory holding leases
 * without its size and mtime.
 */
export async function fsTree(fs: MemoryFileSystem, path = "/"): Promise<string[]> {
  if (LEASE_NAME.test(path)) return path.endsWith(".lease") ? [path] : [];
  const info = await fs.lstat(path);
  const children = info.kind === "directory" ? (await fs.readDir(path)).map((entry) => entry.name).sort() : [];
  const leased = children.some((name) => LEASE_NAME.test(name));
  let line = `${path} ${info.kind} ${info.mode.toString(8)} ${leased ? "" : `${info.size} ${info.mtimeMs}`} ${info.ino}`;
  if (info.kind === "file") {
    const hash = createSha256();
    hash.update(fs.contents(path) ?? new Uint8Array());
    line += ` ${hash.digest()}`;
  }
  const nested = await Promise.all(children.map((name) => fsTree(fs, joinPath(path, name))));
  return [line, ...nested.flat()];
}
