/**
 * `$MC_HOME/credentials.json`: provider keys kept on disk, for users who do
 * not want them in the environment of every process the editor starts.
 *
 * The file is treated like an ssh private key: it must be a regular file
 * (not a symlink, FIFO or device) readable by its owner only, at most 64 KiB.
 * Anything else fails startup with `configuration_invalid` instead of being
 * used or skipped, so a key that other users can read is noticed. A missing
 * file means no credentials. No outcome ever carries the file's content or
 * path: startup errors reach the client verbatim. The same owner-only read
 * ({@link readOwnerOnlyFile}) guards the approvals file (`src/trust/`).
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCode } from "../protocol/errors.ts";
import { PROVIDER_NAME_PATTERN } from "../protocol/identity.ts";
import { type FileInfo, type FileSystem, isRuntimeError, type ReadHandle, RuntimeErrorCode } from "../host/runtime.ts";
import { exactObject, notArray } from "../util/exact-object.ts";
import { parseConfigText } from "../util/jsonc.ts";
import { isPrintable } from "../util/redaction.ts";

/** The credentials file name, inside `$MC_HOME`. */
export const CREDENTIALS_FILE = "credentials.json";

/** Largest credentials file read, in bytes. */
export const MAX_CREDENTIALS_BYTES = 65_536;

/** Provider name to API key. */
export type Credentials = ReadonlyMap<string, string>;

/** Outcome of {@link loadCredentials}. */
export type LoadCredentialsResult =
  | { readonly ok: true; readonly credentials: Credentials }
  | {
    readonly ok: false;
    readonly code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.startupFailed | typeof ErrorCode.startupCancelled;
  };

// A key must hold something besides blanks; controls would corrupt an HTTP header.
const KeySchema = v.pipe(
  v.string(),
  v.minLength(1),
  v.maxLength(4096),
  v.regex(/\S/),
  v.check(isPrintable),
);

const CredentialsSchema = exactObject({
  v: v.literal(1),
  keys: v.pipe(notArray, v.record(v.pipe(v.string(), v.regex(PROVIDER_NAME_PATTERN)), KeySchema)),
});

const INVALID = { ok: false, code: ErrorCode.configurationInvalid } as const;
const FAILED = { ok: false, code: ErrorCode.startupFailed } as const;
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses a credentials text: strict JSON (no comments, no trailing commas),
 * no duplicate or reserved keys, `{"v":1,"keys":{...}}` exactly. Returns
 * `null` for anything else; never throws.
 */
export function parseCredentialsText(text: string): Credentials | null {
  const value = parseConfigText(text, { jsonc: false });
  if (value === null || value === undefined) return null;
  const parsed = v.safeParse(CredentialsSchema, value);
  return parsed.success ? new Map(Object.entries(parsed.output.keys)) : null;
}

/** What {@link readOwnerOnlyFile} found: the bytes, null for no file, or why the file is refused. */
export type OwnerOnlyRead =
  | { readonly ok: true; readonly bytes: Uint8Array | null }
  | { readonly ok: false; readonly code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.startupFailed };

/** Owner-only regular file within the size bound: what ssh demands of a private key. */
function isAcceptable(info: FileInfo, maxBytes: number): boolean {
  return info.kind === "file" && (info.mode & 0o077) === 0 && info.size <= maxBytes;
}

/** Reads at most one byte past the bound, so a file that grew after the stat is still caught. */
async function readBounded(handle: ReadHandle, maxBytes: number): Promise<Uint8Array | null> {
  const buffer = new Uint8Array(maxBytes + 1);
  let length = 0;
  for (;;) {
    const count = await handle.read(buffer.subarray(length), length);
    if (count === 0) break;
    length += count;
    if (length > maxBytes) return null;
  }
  return buffer.slice(0, length);
}

/**
 * Reads a file that must be an owner-only (no group or other permission bit)
 * regular file of at most `maxBytes`: the credentials file, and the approvals
 * file of `src/trust/`. The path is checked with `lstat` (never followed),
 * opened without following a final symlink, and the open handle re-checked
 * to be the same owner-only file, so a swap between the check and the open is
 * refused too. A missing file is `bytes: null`; anything else that is not
 * such a file is `configuration_invalid`; an unreadable one (permission
 * denied, I/O error) is `startup_failed`, like an unreadable settings file.
 */
export async function readOwnerOnlyFile(fs: FileSystem, path: string, maxBytes: number): Promise<OwnerOnlyRead> {
  let before: FileInfo;
  try {
    before = await fs.lstat(path);
  } catch (error) {
    return isRuntimeError(error, RuntimeErrorCode.notFound) ? { ok: true, bytes: null } : FAILED;
  }
  if (!isAcceptable(before, maxBytes)) return INVALID;
  let handle: ReadHandle;
  try {
    handle = await fs.openRead(path);
  } catch (error) {
    const swapped = isRuntimeError(error, RuntimeErrorCode.symlink) || isRuntimeError(error, RuntimeErrorCode.notFile);
    return swapped ? INVALID : FAILED;
  }
  try {
    const opened = await handle.stat();
    if (!isAcceptable(opened, maxBytes) || opened.dev !== before.dev || opened.ino !== before.ino) return INVALID;
    const bytes = await readBounded(handle, maxBytes);
    return bytes === null ? INVALID : { ok: true, bytes };
  } catch {
    return FAILED;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Loads the credentials file at `path`, read as {@link readOwnerOnlyFile}
 * reads it.
 */
export async function loadCredentials(fs: FileSystem, path: string, signal: AbortSignal): Promise<LoadCredentialsResult> {
  if (signal.aborted) return { ok: false, code: ErrorCode.startupCancelled };
  const read = await readOwnerOnlyFile(fs, path, MAX_CREDENTIALS_BYTES);
  if (!read.ok) return read;
  if (read.bytes === null) return { ok: true, credentials: new Map() };
  const bytes = read.bytes;
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return INVALID;
  }
  const credentials = parseCredentialsText(text);
  return credentials === null ? INVALID : { ok: true, credentials };
}
