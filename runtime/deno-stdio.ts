/**
 * What the Deno entry's stdin and stdout are connected to, for the launch
 * check of `serve --stdio`, without Deno's Node-compat layer: Deno 2 has no
 * `fstat` of an inherited descriptor (`Deno.fstatSync` is gone and
 * `Deno.FsFile` cannot be built around fd 0), and `node:fs`'s `fstatSync`
 * boots 115 compat modules, which cost each start 25–50 ms and 4.5 MiB
 * (bench/README.md). In order:
 *
 * 1. a terminal is `isTerminal()`;
 * 2. `Deno.statSync` of the descriptor's own path (`/proc/self/fd/N`,
 *    `/dev/fd/N`) follows it to the open file, as `fstat` does, inode
 *    included; Deno allows that path only under `--allow-all`;
 * 3. otherwise `/bin/sh` tests `/dev/stdin` and `/dev/stdout`, which it
 *    inherits: one short child (~2 ms) whose exit status carries both kinds
 *    (`--allow-run` is one of the permissions serving requires, and the
 *    check runs after that one);
 * 4. where neither answers (no `/bin/sh`, no `/dev/stdin`), `node:fs`'s
 *    `fstatSync` after all.
 *
 * A socket is told from a socketpair by its inode in `/proc/net` (Linux),
 * which Deno also reads only under `--allow-all`: without it, and where
 * there is no `/proc`, a socket is taken for a socketpair, as before.
 *
 * @module
 */

import type * as NodeFs from "node:fs";
import type { StdioKind } from "../src/host/runtime.ts";
import { classifySocket } from "../src/util/stdio-kind.ts";

/** The stdio descriptors the launch check classifies. */
export type StdioFd = 0 | 1;

/** Reads one `/proc/net` table, or "" when it cannot be read. */
function readProcTable(name: string): string {
  try {
    return Deno.readTextFileSync(`/proc/net/${name}`);
  } catch {
    return "";
  }
}

/** A socket's kind from its inode: only Linux lists sockets where Deno may read them. */
function socketKind(inode: number | null): StdioKind {
  return Deno.build.os === "linux" && inode !== null ? classifySocket(readProcTable, String(inode)) : "socketpair";
}

/** The kind of the open file `fd` names, from its own path; null where Deno does not allow it. */
function statKind(fd: StdioFd): StdioKind | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(Deno.build.os === "linux" ? `/proc/self/fd/${fd}` : `/dev/fd/${fd}`);
  } catch {
    return null;
  }
  if (info.isFifo) return "fifo";
  if (info.isFile) return "file";
  if (info.isCharDevice || info.isBlockDevice) return "device";
  return info.isSocket ? socketKind(info.ino) : "other";
}

/**
 * One kind per exit-status digit (base 8, stdin first): 1 FIFO, 2 socket,
 * 3 file, 4 device, 5 anything else that exists, 6 no such path. Everything
 * the script uses is POSIX sh and built in.
 */
const PROBE = "k() { if [ -p \"$1\" ]; then return 1; elif [ -S \"$1\" ]; then return 2; elif [ -f \"$1\" ]; then return 3; " +
  "elif [ -c \"$1\" ] || [ -b \"$1\" ]; then return 4; elif [ -e \"$1\" ]; then return 5; fi; return 6; }; " +
  "k /dev/stdin; i=$?; k /dev/stdout; exit $((i * 8 + $?))";
const PROBED: readonly (StdioKind | null)[] = [null, "fifo", "socketpair", "file", "device", "other", null, null];

/** Both kinds as `shell` sees them, or null for a descriptor it could not tell. */
async function probe(shell: string): Promise<readonly [StdioKind | null, StdioKind | null]> {
  try {
    const { code } = await new Deno.Command(shell, {
      args: ["-c", PROBE],
      clearEnv: true,
      stdin: "inherit",
      stdout: "inherit",
      stderr: "null",
    }).spawn().status;
    return code < 64 ? [PROBED[code >> 3]!, PROBED[code & 7]!] : [null, null];
  } catch {
    return [null, null];
  }
}

// Loaded only where neither the path nor the shell answered, as it was on every start before.
let nodeFs: typeof NodeFs | null = null;

function fstatKind(fd: StdioFd): StdioKind {
  let info: NodeFs.Stats;
  try {
    info = (nodeFs ??= process.getBuiltinModule("node:fs")).fstatSync(fd);
  } catch {
    return "other";
  }
  if (info.isFIFO()) return "fifo";
  if (info.isFile()) return "file";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "device";
  return info.isSocket() ? socketKind(info.ino) : "other";
}

/**
 * Classifies Deno's stdin and stdout; `shell` (a POSIX sh; tests name a
 * missing one to reach the last step) runs at most once for both, and not
 * at all for a terminal stdin, since the launch check asks for stdout only
 * when stdin is served (src/cli.ts).
 */
export function createStdioKinds(shell = "/bin/sh"): (fd: StdioFd) => Promise<StdioKind> {
  let probed: Promise<readonly [StdioKind | null, StdioKind | null]> | null = null;
  return async (fd) => {
    if ((fd === 0 ? Deno.stdin : Deno.stdout).isTerminal()) return "tty";
    const stated = statKind(fd);
    if (stated !== null) return stated;
    return (await (probed ??= probe(shell)))[fd] ?? fstatKind(fd);
  };
}
