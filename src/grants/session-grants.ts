/**
 * Session grants of the negotiated `approval.scope` extension
 * (`docs/features/local-agent-extensions.md`): "allow for this session",
 * scoped to exactly the key the user saw in `approval.requested`.
 *
 * A grant is a string equal to the request's `scope_key`: the tool's name,
 * a space and the call's target as the approval prompt shows it
 * (`write_file "src/a.ts"`, `shell "npm test"`); an MCP tool's target is
 * the server's own tool name (`mcp__srv__a_b "a.b"`: the exposed name
 * names the server, but stands for more than one tool name, and a changed
 * tool list may put another tool behind it). Targets are shown with `showExactly`,
 * which maps back to exactly one value, and tool names hold no space, so
 * equal keys mean the same tool and the same target: matching is string
 * equality, never a prefix or a pattern.
 *
 * Grants live in the child's memory only, per session id, for the child's
 * lifetime: never written to settings or any file (the history records the
 * decision, not the grant), and gone when the child exits. They answer only
 * what would otherwise be asked: a `deny` policy never reaches them.
 *
 * @module
 */

import { utf8ByteCount } from "../util/utf8.ts";
import { redactSecrets } from "../util/redaction.ts";
import { LIMITS } from "../protocol/limits.ts";

/** Grants one child holds at most, over all its sessions: past it, requests offer `once` only. */
export const MAX_SESSION_GRANTS = 256;

/** How an answer applies: to this one call, or to every later call with the same key in this session. */
export type ApprovalScope = "once" | "session";

/**
 * The `scope_key` a session grant for a call of `toolName` on `target`
 * would cover, or null when the key cannot be shown whole
 * (longer than `summary_bytes`, or redaction would change it: the user
 * would grant what they cannot see).
 */
export function scopeKey(toolName: string, target: string, secrets: readonly string[]): string | null {
  const key = `${toolName} ${target}`;
  if (utf8ByteCount(key) > LIMITS.summary_bytes || redactSecrets(key, secrets) !== key) return null;
  return key;
}

/** The session grants of one child. */
export class SessionGrants {
  readonly #bySession = new Map<string, Set<string>>();
  #count = 0;

  /** Whether session `sessionId` holds a grant for exactly `key`. */
  covers(sessionId: string, key: string): boolean {
    return this.#bySession.get(sessionId)?.has(key) ?? false;
  }

  /** Whether another grant fits: a request offers `session` only then. */
  get hasRoom(): boolean {
    return this.#count < MAX_SESSION_GRANTS;
  }

  /** Grants `key` in session `sessionId`; false when the bound is reached (nothing granted). */
  grant(sessionId: string, key: string): boolean {
    const keys = this.#bySession.get(sessionId) ?? new Set<string>();
    if (keys.has(key)) return true;
    if (!this.hasRoom) return false;
    keys.add(key);
    this.#bySession.set(sessionId, keys);
    this.#count++;
    return true;
  }
}
