/**
 * The one public vocabulary for how a tool call's approval ended. Tool cards
 * (`docs/features/local-agent-tool-cards.md`) state it as a call's decision
 * and the `approval.scope` extension's `approval.resolved` event reports it,
 * so a client reads one set of words whichever extension it negotiated.
 *
 * - `not_asked`: the policy allowed the call, nobody was asked;
 * - `allowed` / `denied`: the winning answer;
 * - `expired`: nobody answered in time (the default deny);
 * - `cancelled`: the run was cancelled or the client went away first;
 * - `superseded`: the question stopped mattering before an answer (say a
 *   session grant answered it, or the call was withdrawn).
 *
 * @module
 */

import * as v from "valibot";

/** Every public approval outcome, in the order the docs list them. */
export const APPROVAL_OUTCOMES = ["not_asked", "allowed", "denied", "expired", "cancelled", "superseded"] as const;

/** One public approval outcome. */
export type ApprovalOutcome = typeof APPROVAL_OUTCOMES[number];

/** Validates an {@link ApprovalOutcome} in wire schemas. */
export const ApprovalOutcomeSchema = v.picklist(APPROVAL_OUTCOMES);

/** The outcomes of an approval that was asked: every one but `not_asked` (`approval.resolved`). */
export const RESOLVED_APPROVAL_OUTCOMES = ["allowed", "denied", "expired", "cancelled", "superseded"] as const satisfies readonly Exclude<ApprovalOutcome, "not_asked">[];
