/**
 * The seam between the tool-call path (`tool-calls.ts`) and the tool cards
 * of a client that negotiated `tool.cards`
 * (`docs/features/local-agent-tool-cards.md`): types only, so the path
 * loads no card code. `tool-cards.ts` implements it and is loaded by a
 * dynamic `import()` only for a negotiating client.
 *
 * @module
 */

import type { ApprovalOutcome } from "../protocol/approval-outcomes.ts";
import type { PreparedCall, ToolResult } from "./tools/tool.ts";

/** The card of one tool call, told what happens to the call in order. */
export interface CallCard {
  /**
   * The call is prepared: sends the initial snapshot (with the diff) before
   * anything else of the call. `decision` is `not_asked` when it runs
   * without a question, `allowed` when a session grant (an earlier allow)
   * answers the question, null when it is about to be asked; `forced` when
   * it is asked although its policy allows it.
   */
  prepared(call: PreparedCall, decision: "not_asked" | "allowed" | null, forced: boolean): Promise<void>;
  /** The approval ended: sends an update when the call goes on to run. */
  decided(decision: ApprovalOutcome): Promise<void>;
  /** Settings or the profile denied the call without asking. */
  deniedByPolicy(): void;
  /** The call ran and ended with `result`. */
  ran(result: ToolResult): void;
  /** The field the call's first `activity` event carries (`{ card_id }`), once; `{}` afterwards. */
  activityField(): { readonly card_id?: string };
  /** The call's last activity was emitted with `summary`: sends the terminal snapshot. */
  finished(summary: string): Promise<void>;
}

/** The tool cards of one run. */
export interface ToolCardsPort {
  /** The card of the call reported as activity `activityId` of tool `tool` (its display name). */
  open(activityId: string, tool: string): CallCard;
}
