/**
 * `$MC_HOME/approvals.json`: the approvals `magi-code mcp approve` and `magi-code hooks approve` record.
 * Startup reads it once, and only when something needing approval is
 * configured; only the approve and revoke commands write it
 * (`approvals-write.ts`).
 *
 * Format (strict JSON, no duplicate keys), sorted by kind, name and source,
 * one key's digests oldest first:
 *
 *     { "v": 1, "approvals": [ { "kind": "mcp", "name": "github",
 *       "source": "/home/me/.magi-code/settings.jsonc", "digest": "<64 hex>" } ] }
 *
 * Like the credentials file it must be an owner-only regular file (mode
 * 0600, not a symlink): a file others could write would let them approve
 * programs that then run as the user. Anything else, an oversized file or one
 * approval listed twice (kind, name, source and digest) is
 * `configuration_invalid`.
 *
 * @module
 */

import * as v from "valibot";
import { ErrorCode } from "../protocol/errors.ts";
import type { FileSystem } from "../host/runtime.ts";
import { readOwnerOnlyFile } from "../config/credentials.ts";
import { exactObject } from "../util/exact-object.ts";
import { parseConfigText } from "../util/jsonc.ts";
import { joinPath } from "../util/paths.ts";
import { hasLoneSurrogate } from "../util/utf8.ts";
import { type Approval, sortApprovals } from "./approvals.ts";

/** The approvals file name, inside `$MC_HOME`. */
export const APPROVALS_FILE = "approvals.json";

/** The approvals file of the storage root `home`. */
export function approvalsPath(home: string): string {
  return joinPath(home, APPROVALS_FILE);
}

/** Largest approvals file read, in bytes. */
export const MAX_APPROVALS_BYTES = 1_048_576;

/** Most approvals one file holds. */
export const MAX_APPROVALS = 4096;

// deno-lint-ignore no-control-regex -- matching controls is the point
const NO_CONTROLS = /^[^\u0000-\u001F\u007F-\u009F]+$/;
const wellFormed = v.check((text: string) => !hasLoneSurrogate(text));

const ApprovalSchema = exactObject({
  kind: v.pipe(v.string(), v.regex(/^[a-z][a-z0-9_]{0,31}$/)),
  name: v.pipe(v.string(), v.maxLength(128), v.regex(NO_CONTROLS), wellFormed),
  source: v.pipe(v.string(), v.maxLength(4096), v.startsWith("/"), v.regex(NO_CONTROLS), wellFormed),
  digest: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
});

const ApprovalsSchema = exactObject({
  v: v.literal(1),
  approvals: v.pipe(v.array(ApprovalSchema), v.maxLength(MAX_APPROVALS)),
});

/** The outcome of {@link readApprovals}. */
export type ReadApprovalsResult =
  | { readonly ok: true; readonly approvals: readonly Approval[]; readonly bytes: Uint8Array | null }
  | {
    readonly ok: false;
    readonly code: typeof ErrorCode.configurationInvalid | typeof ErrorCode.startupFailed | typeof ErrorCode.startupCancelled;
  };

const INVALID = { ok: false, code: ErrorCode.configurationInvalid } as const;
const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Parses an approvals text; null for anything that is not a valid approvals file. Never throws. */
export function parseApprovalsText(text: string): Approval[] | null {
  const value = parseConfigText(text, { jsonc: false });
  if (value === null || value === undefined) return null;
  const parsed = v.safeParse(ApprovalsSchema, value);
  if (!parsed.success) return null;
  const keys = new Set(parsed.output.approvals.map((approval) => JSON.stringify([approval.kind, approval.name, approval.source, approval.digest])));
  return keys.size === parsed.output.approvals.length ? parsed.output.approvals : null;
}

/** The file's bytes for `approvals`: sorted, one approval a line. */
export function serializeApprovals(approvals: readonly Approval[]): Uint8Array {
  const lines = sortApprovals(approvals).map(({ kind, name, source, digest }) => `    ${JSON.stringify({ kind, name, source, digest })}`);
  return encoder.encode(`{\n  "v": 1,\n  "approvals": [${lines.length === 0 ? "" : `\n${lines.join(",\n")}\n  `}]\n}\n`);
}

/**
 * Reads the approvals file at `path`; a missing file is no approvals.
 * `bytes` is what was read (null: no file), so a writer can tell whether
 * the file changed under it.
 */
export async function readApprovals(fs: FileSystem, path: string, signal: AbortSignal): Promise<ReadApprovalsResult> {
  if (signal.aborted) return { ok: false, code: ErrorCode.startupCancelled };
  const read = await readOwnerOnlyFile(fs, path, MAX_APPROVALS_BYTES);
  if (!read.ok) return read;
  if (read.bytes === null) return { ok: true, approvals: [], bytes: null };
  let text: string;
  try {
    text = decoder.decode(read.bytes);
  } catch {
    return INVALID;
  }
  const approvals = parseApprovalsText(text);
  return approvals === null ? INVALID : { ok: true, approvals, bytes: read.bytes };
}
