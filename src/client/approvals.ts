/**
 * A run's approvals as a client sees them: the pending ones with an
 * `answer(allow, scope)` helper, and with the negotiated `approval.scope`
 * how each ended (`approval.resolved`), checked so that a stream that
 * cannot be right (a resolution of an approval never asked, a second one,
 * none before `run.finished`, `session` offered without the key it grants)
 * is a protocol violation.
 *
 * @module
 */

import type { EventData, WireEvent } from "../protocol/events.ts";
import { ErrorCode } from "../protocol/errors.ts";
import { ProtocolError } from "./errors.ts";

/** A pending approval of a run; answer it, or it is denied after `expiresInMs`. */
export interface Approval {
  readonly approvalId: string;
  /** What the tool wants to do, at most 1,024 bytes, redacted. */
  readonly summary: string;
  /** Milliseconds from the event until the server denies it by default. */
  readonly expiresInMs: number;
  /**
   * The scopes it may be answered with (`approval.scope` negotiated): always
   * `once`, and `session` when {@link scopeKey} names what a session grant
   * covers. Without the extension: `["once"]`.
   */
  readonly scopes: readonly ApprovalScope[];
  /** What an allowing `session` answer grants for the rest of the session (show it to the user), else null. */
  readonly scopeKey: string | null;
  /**
   * Sends `approval.answer`. Resolves true when this answer was recorded,
   * false when it came too late (`stale_approval`: expired, cancelled, or
   * the run finished); rejects on any other failure. `scope` (default
   * `once`) must be one of {@link scopes}: `session` is sent only then.
   */
  answer(allow: boolean, scope?: ApprovalScope): Promise<boolean>;
}

/** How an approval answer applies (`approval.scope`). */
export type ApprovalScope = "once" | "session";

/** How an approval ended, from `approval.resolved` (`approval.scope`). */
export type ApprovalResolution = EventData<"approval.resolved">["outcome"];

/** Sends one `approval.answer` for the run. */
export type SendAnswer = (approvalId: string, allow: boolean, scope: ApprovalScope) => Promise<unknown>;

/** The approvals of one run. */
export class RunApprovals {
  /** Approvals requested and not yet answered or resolved. */
  readonly pending = new Map<string, Approval>();
  /** Every approval id the run asked with and, once `approval.resolved` said it, how it ended; else null. */
  readonly resolutions = new Map<string, ApprovalResolution | null>();
  // Requests that carried the extension's fields: each is resolved exactly once, before `run.finished`.
  readonly #unresolved = new Set<string>();

  /** Applies `approval.resolved`; returns what was wrong with it, or null. */
  resolved(data: EventData<"approval.resolved">): string | null {
    if (!this.resolutions.has(data.approval_id)) return "approval.resolved for an approval never requested";
    if (this.resolutions.get(data.approval_id) !== null) return "approval.resolved repeated";
    this.resolutions.set(data.approval_id, data.outcome);
    this.#unresolved.delete(data.approval_id);
    this.pending.delete(data.approval_id);
    return null;
  }

  /** Applies `run.finished`; returns what was wrong (an `approval.scope` request left unresolved), or null. */
  finished(): string | null {
    this.pending.clear();
    return this.#unresolved.size === 0 ? null : "run.finished before approval.resolved of every approval";
  }

  /** Applies `approval.requested`, answering through `send`; returns what was wrong with it, or null. */
  requested(data: EventData<"approval.requested">, send: SendAnswer): string | null {
    if (this.resolutions.has(data.approval_id)) return "approval.requested repeated an approval id";
    const scopes = data.scopes ?? ["once"];
    const scopeKey = data.scope_key ?? null;
    // `session` comes with the key it grants, and only then: anything else would grant what nobody saw.
    if (!scopes.includes("once") || scopes.includes("session") !== (scopeKey !== null)) return "approval.requested scopes do not match its scope_key";
    this.resolutions.set(data.approval_id, null);
    if (data.scopes !== undefined) this.#unresolved.add(data.approval_id);
    const approval: Approval = {
      approvalId: data.approval_id,
      summary: data.summary,
      expiresInMs: data.expires_in_ms,
      scopes,
      scopeKey,
      answer: async (allow, scope = "once") => {
        if (!scopes.includes(scope)) throw new RangeError(`this approval cannot be answered for scope ${scope}`);
        this.pending.delete(data.approval_id);
        try {
          await send(data.approval_id, allow, scope);
          return true;
        } catch (error) {
          if (error instanceof ProtocolError && error.code === ErrorCode.staleApproval) return false;
          throw error;
        }
      },
    };
    this.pending.set(data.approval_id, approval);
    return null;
  }
}

/** The extension capability `event` belongs to (what it says only a client that required it gets), or null for a base event. */
export function negotiatedBy(event: WireEvent): "run.usage" | "approval.scope" | "tool.cards" | "client.tools" | null {
  if (event.event === "run.usage") return "run.usage";
  if (event.event === "client.tool.call" || event.event === "client.tool.cancel") return "client.tools";
  if (event.event === "tool.card" || (event.event === "activity" && event.data.card_id !== undefined)) return "tool.cards";
  if (event.event === "approval.resolved") return "approval.scope";
  return event.event === "approval.requested" && ("scopes" in event.data || "scope_key" in event.data) ? "approval.scope" : null;
}
