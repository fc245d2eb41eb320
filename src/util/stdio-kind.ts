/**
 * Pure helpers the runtime adapters share to classify a socket on standard
 * input or output. On Linux an unnamed AF_UNIX socket (what Node, Electron and
 * libuv parents create with `socketpair` for child stdio) is listed in
 * `/proc/net/unix` by inode with an empty path; a TCP socket is not listed.
 *
 * @module
 */

import type { StdioKind } from "../host/runtime.ts";

/** Extracts the inode from a `/proc/self/fd/N` link target such as `socket:[12345]`. */
export function socketInode(linkTarget: string): string | null {
  const match = /^socket:\[(\d+)\]$/.exec(linkTarget);
  return match === null ? null : match[1]!;
}

/**
 * Classifies the socket with `inode` from the text of `/proc/net/unix`:
 * `socketpair` for an unnamed AF_UNIX **stream** socket (type `0001`; a
 * datagram or seqpacket pair would lose message boundaries or silently drop
 * writes), `socket` for anything else. Returns `null` when the inode is not
 * listed, so the caller can look further.
 */
export function classifyUnixSocket(procNetUnix: string, inode: string): StdioKind | null {
  const lines = procNetUnix.split("\n");
  for (let index = 1; index < lines.length; index++) {
    // Columns: Num RefCount Protocol Flags Type St Inode [Path]
    const columns = lines[index]!.trim().split(/\s+/);
    if (columns[6] !== inode) continue;
    return columns.length <= 7 && columns[4] === "0001" ? "socketpair" : "socket";
  }
  return null;
}

/** Whether `inode` is listed in one of the `/proc/net/{tcp,tcp6,udp,udp6}` tables' texts. */
export function listedAsInet(tables: readonly string[], inode: string): boolean {
  // Columns: sl local rem st tx:rx tr:when retrnsmt uid timeout inode …
  return tables.some((table) => table.split("\n").some((line) => line.trim().split(/\s+/)[9] === inode));
}

/**
 * The stdio kind of a socket from the `/proc/net` tables, read through
 * `readTable` (which answers "" for an unreadable table) only as far as
 * needed. A socket listed in no table belongs to another network namespace (a
 * sandboxed child of `unshare -n` or `bwrap --unshare-net`): only a
 * socketpair inherited from the parent ends up there, so it is served as one,
 * as on platforms without /proc.
 */
export function classifySocket(readTable: (name: string) => string, inode: string): StdioKind {
  const unix = classifyUnixSocket(readTable("unix"), inode);
  if (unix !== null) return unix;
  const inet = ["tcp", "tcp6", "udp", "udp6"].map(readTable);
  return listedAsInet(inet, inode) ? "socket" : "socketpair";
}
