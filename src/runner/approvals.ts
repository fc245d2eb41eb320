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

/**
 * How an approval ended: only an explicit winning allow reply yields
 * `allowed`; `expired` is the default deny of an approval nobody answered
 * in time, kept apart so the model is not told the user refused.
 */
export type ApprovalDecision = "allowed" | "denied" | "expired";

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
  /** `expires_in_ms` for the event; 0 when the broker had already been cancelled. */
  readonly expiresInMs: number;
  /** Settles exactly once, and never rejects. */
  readonly decision: Promise<ApprovalDecision>;
  /** Starts the expiry: call when `approval.requested` was handed to the writer. Later calls, or calls after settling, do nothing. */
  delivered(): void;
}

/** The outcome of {@link ApprovalBroker.answer}: recorded, or `stale_approval`. */
export type ApprovalAnswerResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly code: typeof ErrorCode.staleApproval };

interface Waiting {
  readonly resolve: (decision: ApprovalDecision) => void;
  timer: Disposable | null;
}

// A repeated UUID would let an answer meant for one approval settle another,
// so a host that keeps repeating itself is a bug worth stopping the run for.
const UUID_ATTEMPTS = 4;

const STALE: ApprovalAnswerResult = Object.freeze({ ok: false, code: ErrorCode.staleApproval });
const RECORDED: ApprovalAnswerResult = Object.freeze({ ok: true });

/** Issues and settles the approvals of one run; create one per run and cancel it at cleanup. */
export class ApprovalBroker {
  readonly #host: ApprovalHost;
  readonly #waiting = new Map<string, Waiting>();
  // Kept for the run's life (a run's approvals are few) so no id is ever issued twice.
  readonly #issued = new Set<string>();
  #cancelReason: ApprovalCancelReason | null = null;

  /** Creates a broker whose timers and ids come from `host`. */
  constructor(host: ApprovalHost) {
    this.#host = host;
  }

  /**
   * Issues an approval for `summary` (already bounded and redacted, e.g. by
   * `describeCall`). After {@link cancel} the request is refused: its
   * decision is already `denied`, no timer starts, and its id is stale.
   */
  request(summary: string): ApprovalRequest {
    const approvalId = this.#freshId();
    if (this.#cancelReason !== null) {
      return { approvalId, summary, expiresInMs: 0, decision: Promise.resolve("denied"), delivered: () => {} };
    }
    let resolve!: (decision: ApprovalDecision) => void;
    const decision = new Promise<ApprovalDecision>((r) => (resolve = r));
    const waiting: Waiting = { resolve, timer: null };
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
    return { approvalId, summary, expiresInMs, decision, delivered };
  }

  /**
   * Records the client's reply. Only the first reply to a pending approval
   * counts; unknown, answered, expired and cancelled ids are
   * `stale_approval` and change nothing.
   */
  answer(approvalId: string, allow: boolean): ApprovalAnswerResult {
    return this.#settle(approvalId, allow ? "allowed" : "denied") ? RECORDED : STALE;
  }

  /**
   * Denies every pending approval and refuses all later requests and answers.
   * Idempotent. Returns how many approvals it denied. `reason` says at the
   * call site why the run stopped; the outcome is the same for both.
   */
  cancel(reason: ApprovalCancelReason): number {
    this.#cancelReason ??= reason;
    let denied = 0;
    for (const approvalId of [...this.#waiting.keys()]) {
      if (this.#settle(approvalId, "denied")) denied++;
    }
    return denied;
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
