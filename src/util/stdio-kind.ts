/**
 * Pure helpers the runtime adapters share to classify a socket on standard
 * input or output. On Linux an unnamed AF_UNIX socket (what Node, Electron and
 * libuv parents create with `socketpair` for child stdio) is listed in
 * `/proc/net/unix` by inode with an empty path; a TCP socket is not listed.
 *
 * @module
 */

import type { StdioKind } from "../runtime.ts";

/** Extracts the inode from a `/proc/self/fd/N` link target such as `socket:[12345]`. */
export function socketInode(linkTarget: string): string | null {
  const match = /^socket:\[(\d+)\]$/.exec(linkTarget);
  return match === null ? null : match[1]!;
}

/**
 * Classifies the socket with `inode` from the text of `/proc/net/unix`:
 * `socketpair` when it is an AF_UNIX socket without a bound path, `socket`
 * otherwise (named or not AF_UNIX at all).
 */
export function classifyUnixSocket(procNetUnix: string, inode: string): StdioKind {
  const lines = procNetUnix.split("\n");
  for (let index = 1; index < lines.length; index++) {
    // Columns: Num RefCount Protocol Flags Type St Inode [Path]
    const columns = lines[index]!.trim().split(/\s+/);
    if (columns[6] === inode) return columns.length <= 7 ? "socketpair" : "socket";
  }
  return "socket";
}
