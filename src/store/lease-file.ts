/**
 * The lease file format of `docs/storage.md` ("Leases") and how another
 * child judges a lease it found: the JSON body, its bounded read, and the
 * staleness rule, and publishing a body whole. Taking, renewing and
 * releasing leases is `leases.ts`.
 *
 * @module
 */

import * as v from "valibot";
import { type FileSystem, isRuntimeError, type Runtime } from "../host/runtime.ts";
import { SESSION_ID_PATTERN } from "../protocol/identity.ts";
import { exactObject } from "../util/exact-object.ts";

/** A lease whose heartbeat is older than this (or whose unreadable file's mtime is) is stale. */
export const LEASE_STALE_MS = 60_000;

/** How often a holder renews `heartbeat_at`: four renewals fit in one stale window. */
export const LEASE_HEARTBEAT_MS = 15_000;

/** Lease files are private to the user, like session files. */
const LEASE_MODE = 0o600;

/**
 * How long after a lease file was last written a read of it may stand for
 * later ones by its identity (`leases.ts`). File timestamps come from the
 * kernel's coarse clock (a tick of up to 10 ms, and whole milliseconds on
 * Deno), so a file written within a tick of another can carry the same
 * mtime; once the one read is older than this, anything written later
 * carries a later one.
 */
export const LEASE_IDENTITY_SETTLE_MS = 20;

/** The most bytes read from a lease file; ours stay well under it (about 250 bytes). */
export const LEASE_READ_LIMIT = 1024;

/** Instance ids appear in temporary file names, so they keep the session id's file-name grammar. */
export const INSTANCE_ID_PATTERN: RegExp = SESSION_ID_PATTERN;

// Printable ASCII only: anything else could not be compared byte-for-byte
// across runtimes, and escaping it could push the body past the read limit.
const HOST_PATTERN = /^[\x21-\x7e]{1,255}$/;
const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const MAX_PID = 0x7fff_ffff;

const TimestampSchema = v.pipe(
  v.string(),
  v.regex(TIMESTAMP_PATTERN),
  v.check((text) => !Number.isNaN(Date.parse(text))),
);

/** One lease file's JSON object. Unknown keys make it unparseable, which is treated as held. */
export const LeaseBodySchema = exactObject({
  v: v.literal(1),
  pid: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_PID)),
  instance_id: v.pipe(v.string(), v.regex(INSTANCE_ID_PATTERN)),
  host: v.nullable(v.pipe(v.string(), v.regex(HOST_PATTERN))),
  acquired_at: TimestampSchema,
  heartbeat_at: TimestampSchema,
});

/** The output of {@link LeaseBodySchema}. */
export type LeaseBody = v.InferOutput<typeof LeaseBodySchema>;

/** What a lease file said: a valid body, or only its modification time when it could not be parsed. */
export type LeaseHolder =
  | { readonly state: "parsed"; readonly body: LeaseBody }
  | { readonly state: "unparseable"; readonly mtimeMs: number };

/** What {@link inspectLease} found at a lease path. */
export type LeaseInspection =
  | { readonly state: "missing" }
  | { readonly state: "failed" }
  | {
    readonly state: "present";
    readonly holder: LeaseHolder;
    /** The file's identity as {@link leaseIdentity} gives it, taken before the read. */
    readonly identity: string;
    /** Its modification time, from the same `lstat`. */
    readonly mtimeMs: number;
    /** Identity plus content: equal fingerprints mean nobody renewed or replaced the file in between. */
    readonly fingerprint: string;
  };

/** What {@link leaseIdentity} found at a lease path. */
export type LeaseIdentity = { readonly state: "missing" | "failed" } | { readonly state: "present"; readonly identity: string; readonly mtimeMs: number };

/**
 * The identity of the lease file at `path`, from one `lstat`: device,
 * inode, size and modification time. Lease files are only ever published
 * by a link or a rename and removed by an unlink, never rewritten in
 * place, so an equal identity means the same bytes.
 */
export async function leaseIdentity(fs: FileSystem, path: string): Promise<LeaseIdentity> {
  try {
    const info = await fs.lstat(path);
    return { state: "present", identity: `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`, mtimeMs: info.mtimeMs };
  } catch (error) {
    return { state: isRuntimeError(error, "not_found") ? "missing" : "failed" };
  }
}

/** Formats wall-clock milliseconds as the RFC 3339 UTC timestamp (with milliseconds) leases store. */
export function leaseTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** The runtime's host name if a lease can carry it, else null (which disables the pid rule). */
export function leaseHost(runtime: Runtime): string | null {
  const host = runtime.hostname();
  return host !== null && HOST_PATTERN.test(host) ? host : null;
}

/** Serialises a body; the result is always under {@link LEASE_READ_LIMIT}. */
export function encodeLeaseBody(body: LeaseBody): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(body));
}

/**
 * Whether `holder` may be removed by someone else: its pid is dead on this
 * host, or its heartbeat is more than {@link LEASE_STALE_MS} old; an
 * unparseable file only once its mtime is that old. The pid rule needs both
 * hosts known and equal, because a pid means nothing on another machine.
 */
export function isLeaseStale(
  holder: LeaseHolder,
  nowMs: number,
  isAlive: (pid: number) => boolean,
  host: string | null,
): boolean {
  if (holder.state === "unparseable") return nowMs - holder.mtimeMs > LEASE_STALE_MS;
  const { body } = holder;
  if (host !== null && body.host === host && !isAlive(body.pid)) return true;
  // A heartbeat from more than the stale bound in the future (a skewed or forged clock) would
  // otherwise hold the session for ever; it counts as stale like an old one.
  return Math.abs(nowMs - Date.parse(body.heartbeat_at)) > LEASE_STALE_MS;
}

function parseBody(bytes: Uint8Array): LeaseBody | null {
  try {
    const parsed = v.safeParse(LeaseBodySchema, JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)));
    return parsed.success ? parsed.output : null;
  } catch {
    return null;
  }
}

/**
 * Reads the lease at `path` within {@link LEASE_READ_LIMIT} bytes. A file
 * that is oversized, not a regular file, not UTF-8 JSON or not a valid body
 * is `unparseable`, never an error: only a failing disk is `failed`.
 */
export async function inspectLease(fs: FileSystem, path: string): Promise<LeaseInspection> {
  const found = await leaseIdentity(fs, path);
  if (found.state !== "present") return found;
  const { identity, mtimeMs } = found;
  let bytes: Uint8Array | null = null;
  try {
    bytes = await fs.readFile(path, LEASE_READ_LIMIT);
  } catch (error) {
    if (isRuntimeError(error, "not_found")) return { state: "missing" };
    if (isRuntimeError(error, "io")) return { state: "failed" };
  }
  const body = bytes === null ? null : parseBody(bytes);
  const content = bytes === null ? "" : Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
  return {
    state: "present",
    holder: body === null ? { state: "unparseable", mtimeMs } : { state: "parsed", body },
    identity,
    mtimeMs,
    fingerprint: `${identity}:${content}`,
  };
}

/**
 * Removes the lease at `path` only if it still has `fingerprint`, so a
 * lease renewed or replaced since it was judged is left alone. The window
 * between the check and the unlink stays open (the contract has no
 * compare-and-delete); the holder's identity check before each append is
 * what closes it.
 */
export async function removeLeaseIf(
  fs: FileSystem,
  path: string,
  fingerprint: string,
): Promise<"removed" | "changed" | "failed"> {
  const current = await inspectLease(fs, path);
  if (current.state === "missing") return "removed";
  if (current.state === "failed") return "failed";
  if (current.fingerprint !== fingerprint) return "changed";
  try {
    await fs.unlink(path);
    return "removed";
  } catch (error) {
    return isRuntimeError(error, "not_found") ? "removed" : "failed";
  }
}

/**
 * Creates `path` exclusively, replacing a leftover once; false on any
 * failure, after which no partial file is left (a full disk can cut the
 * write short).
 */
export async function createFresh(fs: FileSystem, path: string, bytes: Uint8Array): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.createExclusive(path, bytes, LEASE_MODE);
      return true;
    } catch (error) {
      const leftover = isRuntimeError(error, "exists") && attempt === 0;
      await fs.unlink(path).catch(() => {});
      if (!leftover) return false;
    }
  }
  return false;
}

/**
 * Publishes `bytes` at `path` whole and without replacing anything: writes
 * them to `temporary` (a name only this instance uses), links it to `path`
 * and removes the temporary name. `exists` when `path` was already there.
 */
export async function publishLease(fs: FileSystem, path: string, temporary: string, bytes: Uint8Array): Promise<"created" | "exists" | "failed"> {
  if (!(await createFresh(fs, temporary, bytes))) return "failed";
  try {
    await fs.link(temporary, path);
    return "created";
  } catch (error) {
    return isRuntimeError(error, "exists") ? "exists" : "failed";
  } finally {
    await fs.unlink(temporary).catch(() => {});
  }
}
