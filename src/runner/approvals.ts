/**
 * The approval broker of one run: it issues run-scoped approval ids, lets the
 * first reply win, denies on expiry, cancellation or disconnect, and never lets
 * an id authorize twice.
 *
 * The turn loop calls {@link ApprovalBroker.request} when a tool's policy is
 * `ask`, emits `approval.requested` from the returned fields, calls
 * `delivered` once the event is handed to the writer (the expiry counts from
 * there, so `expires_in_ms` is the true time left however long the event
 * waited in the run's channel), and awaits `decision`; `approval.answer` goes to {@link ApprovalBroker.answer}, whose
 * failure is `stale_approval` data for the response; `turn.cancel`, EOF and
 * run cleanup call {@link ApprovalBroker.cancel}. Everything here is
 * synchronous, so the one event loop orders an answer, an expiry timer and a
 * cancel strictly: whichever runs first settles the approval and the others
 * find nothing left to settle.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { LIMITS } from "../protocol/limits.ts";
import type { Disposable, Runtime } from "../host/runtime.ts";
import type { ApprovalScope, SessionGrants } from "../grants/session-grants.ts";

/**
 * How an approval ended: only an explicit winning allow reply yields
 * `allowed`; `expired` is the default deny of an approval nobody answered
 * in time, kept apart so the model is not told the user refused;
 * `cancelled` is the deny of a run that was cancelled or whose client went
 * away; `superseded` that of a question withdrawn because its answer
 * stopped mattering ({@link ApprovalBroker.withdraw}). The words are those
 * of `protocol/approval-outcomes.ts`.
 */
export type ApprovalDecision = "allowed" | "denied" | "expired" | "cancelled" | "superseded";

/**
 * The `approval.scope` extension's side of a broker: the child's session
 * grants and the session this run belongs to. Absent: the client did not
 * negotiate it, and every answer is for one call.
 */
export interface ScopedApprovals {
  readonly grants: SessionGrants;
  readonly sessionId: string;
}

/** Why a broker stopped: the run was cancelled, or the client went away. */
export type ApprovalCancelReason = "cancelled" | "disconnected";

/** The slice of the {@link Runtime} the broker needs; a `ManualClock` plus a UUID source serves in tests. */
export type ApprovalHost = Pick<Runtime, "setTimer" | "randomUUID">;

/** One issued approval: the `approval.requested` data and the decision to await. */
export interface ApprovalRequest {
  /** The run-scoped random UUID the client answers with. */
  readonly approvalId: string;
  /** The safe summary the caller passed in, echoed so one object carries the whole event. */
  readonly summary: string;
  /** The key a session grant would cover, when `session` is among the scopes this request may be answered with; else null. */
  readonly scopeKey: string | null;
  /** `expires_in_ms` for the event; 0 when the broker had already been cancelled. */
  readonly expiresInMs: number;
  /** Settles exactly once, and never rejects. */
  readonly decision: Promise<ApprovalDecision>;
  /** Starts the expiry: call when `approval.requested` was handed to the writer. Later calls, or calls after settling, do nothing. */
  delivered(): void;
}

/**
 * The outcome of {@link ApprovalBroker.answer}: recorded, `stale_approval`,
 * or `invalid_params` for a `session` answer to a request that offered only
 * `once` (the approval stays pending).
 */
export type ApprovalAnswerResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: typeof ErrorCode.staleApproval | typeof ErrorCode.invalidParams };

interface Waiting {
  readonly resolve: (decision: ApprovalDecision) => void;
  readonly scopeKey: string | null;
  timer: Disposable | null;
}

// A repeated UUID would let an answer meant for one approval settle another,
// so a host that keeps repeating itself is a bug worth stopping the run for.
const UUID_ATTEMPTS = 4;

const STALE: ApprovalAnswerResult = Object.freeze({ ok: false, code: ErrorCode.staleApproval });
const RECORDED: ApprovalAnswerResult = Object.freeze({ ok: true });
const NOT_OFFERED: ApprovalAnswerResult = Object.freeze({ ok: false, code: ErrorCode.invalidParams });

/** Issues and settles the approvals of one run; create one per run and cancel it at cleanup. */
export class ApprovalBroker {
  readonly #host: ApprovalHost;
  readonly #waiting = new Map<string, Waiting>();
  // Kept for the run's life (a run's approvals are few) so no id is ever issued twice.
  readonly #issued = new Set<string>();
  readonly #scoped: ScopedApprovals | null;
  #cancelReason: ApprovalCancelReason | null = null;

  /** Creates a broker whose timers and ids come from `host`; `scoped` when the client negotiated `approval.scope`. */
  constructor(host: ApprovalHost, scoped: ScopedApprovals | null = null) {
    this.#host = host;
    this.#scoped = scoped;
  }

  /** Whether the client negotiated `approval.scope`: requests then name their scopes and report how they ended. */
  get scoped(): boolean {
    return this.#scoped !== null;
  }

  /** Whether a session grant of this run's session covers exactly `key` (never without `approval.scope`). */
  granted(key: string | null): boolean {
    return key !== null && this.#scoped !== null && this.#scoped.grants.covers(this.#scoped.sessionId, key);
  }

  /**
   * Issues an approval for `summary` (already bounded and redacted, e.g. by
   * `describeCall`). `key` is what a session grant for the call would
   * cover (`grants/session-grants.ts`), or null: `session` is offered only
   * with `approval.scope` negotiated and room for another grant. After
   * {@link cancel} the request is refused: its decision is already
   * `cancelled`, no timer starts, and its id is stale.
   */
  request(summary: string, key: string | null = null): ApprovalRequest {
    const approvalId = this.#freshId();
    const scopeKey = key !== null && this.#scoped?.grants.hasRoom === true ? key : null;
    if (this.#cancelReason !== null) {
      return { approvalId, summary, scopeKey, expiresInMs: 0, decision: Promise.resolve("cancelled"), delivered: () => {} };
    }
    let resolve!: (decision: ApprovalDecision) => void;
    const decision = new Promise<ApprovalDecision>((r) => (resolve = r));
    const waiting: Waiting = { resolve, scopeKey, timer: null };
    this.#waiting.set(approvalId, waiting);
    const expiresInMs = LIMITS.approval_expiry_ms;
    let armed = false;
    const delivered = () => {
      // Settled meanwhile (cancel): nothing left to expire.
      if (armed || this.#waiting.get(approvalId) !== waiting) return;
      armed = true;
      waiting.timer = this.#host.setTimer(expiresInMs, () => {
        // The timer is spent once it fires; dropping it keeps #settle from disposing a fired timer.
        waiting.timer = null;
        this.#settle(approvalId, "expired");
      });
    };
    return { approvalId, summary, scopeKey, expiresInMs, decision, delivered };
  }

  /**
   * Records the client's reply. Only the first reply to a pending approval
   * counts; unknown, answered, expired and cancelled ids are
   * `stale_approval` and change nothing. An allowing `session` answer
   * grants the request's key before the decision settles, so the next call
   * already finds it; a denying one is just a deny.
   */
  answer(approvalId: string, allow: boolean, scope: ApprovalScope = "once"): ApprovalAnswerResult {
    const waiting = this.#waiting.get(approvalId);
    if (waiting === undefined) return STALE;
    if (scope === "session") {
      if (waiting.scopeKey === null || this.#scoped === null) return NOT_OFFERED;
      // The request offered `session` only with room, and a child has one run: the grant fits.
      if (allow) this.#scoped.grants.grant(this.#scoped.sessionId, waiting.scopeKey);
    }
    this.#settle(approvalId, allow ? "allowed" : "denied");
    return RECORDED;
  }

  /**
   * Denies every pending approval (`cancelled`) and refuses all later
   * requests and answers. Idempotent. Returns how many approvals it denied.
   * `reason` says at the call site why the run stopped; the outcome is the
   * same for both.
   */
  cancel(reason: ApprovalCancelReason): number {
    this.#cancelReason ??= reason;
    let denied = 0;
    for (const approvalId of [...this.#waiting.keys()]) {
      if (this.#settle(approvalId, "cancelled")) denied++;
    }
    return denied;
  }

  /**
   * Withdraws one pending approval whose answer no longer matters (a Code
   * Mode program ended while its call waited): it is denied as
   * `superseded` and a later answer is `stale_approval`. False when it was
   * no longer pending.
   */
  withdraw(approvalId: string): boolean {
    return this.#settle(approvalId, "superseded");
  }

  /** Settles `approvalId` if it is still pending; false if something else got there first. */
  #settle(approvalId: string, decision: ApprovalDecision): boolean {
    const waiting = this.#waiting.get(approvalId);
    if (waiting === undefined) return false;
    // Removing before resolving is what makes every later reply stale.
    this.#waiting.delete(approvalId);
    waiting.timer?.dispose();
    waiting.timer = null;
    waiting.resolve(decision);
    return true;
  }

  #freshId(): string {
    for (let attempt = 0; attempt < UUID_ATTEMPTS; attempt++) {
      const id = this.#host.randomUUID();
      if (!this.#issued.has(id)) {
        this.#issued.add(id);
        return id;
      }
    }
    throw new Error("The runtime's randomUUID() kept repeating itself");
  }
}
