/**
 * Randomness and hashing for the Node runtime without evaluating
 * `node:crypto` at start-up: that module (and Web Crypto behind
 * `globalThis.crypto`) costs a child about 2 ms of CPU and 1 MiB before its
 * `initialize` answer, which needs only one random instance id
 * (bench/README.md, start-up). Hashing a file loads it on first use.
 *
 * @module
 */

import type * as Crypto from "node:crypto";
import * as fs from "node:fs";
import type { Sha256 } from "../src/host/runtime.ts";
import { toHex } from "../src/util/digest.ts";
import { nodeBuiltin } from "./node-builtin.ts";

/**
 * A version 4 UUID from 16 bytes of the kernel's random source
 * (`/dev/urandom`, what `getrandom` reads). `crypto.randomUUID()` would
 * evaluate `node:crypto` and Web Crypto before the `initialize` answer
 * (about 2 ms of every start, bench/README.md) only to name the instance;
 * where that device cannot be read or is not a character device (Windows,
 * a sandbox without `/dev`), `node:crypto` names it.
 */
export function randomUUID(): string {
  const bytes = new Uint8Array(16);
  let fd: number | null = null;
  try {
    fd = fs.openSync("/dev/urandom", "r");
    // Only the kernel's device is random: a regular file there (planted as C:\dev\urandom on
    // Windows, or bind-mounted in a container) would repeat the same bytes in every call.
    if (!fs.fstatSync(fd).isCharacterDevice()) throw new Error("/dev/urandom is not a character device");
    if (fs.readSync(fd, bytes, 0, 16, null) !== 16) throw new Error("A short read from /dev/urandom");
  } catch {
    return nodeBuiltin<typeof Crypto>("node:crypto").randomUUID();
  } finally {
    if (fd !== null) fs.closeSync(fd);
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** An incremental SHA-256 over `node:crypto`, which hashes each update without copying it first. */
export function createSha256(): Sha256 {
  const hash = nodeBuiltin<typeof Crypto>("node:crypto").createHash("sha256");
  return {
    update: (bytes) => void hash.update(bytes),
    digest: () => hash.digest("hex"),
  };
}
