/**
 * The `tool_card` record (`docs/storage.md#records`): a tool call's card as
 * its terminal snapshot left it, stored once per call with the run for a
 * client that negotiated `tool.cards`
 * (`docs/features/local-agent-tool-cards.md`), which `history.page` attaches
 * to the call's activity entry for such a client. Always `ignorable`: it
 * only adds detail to an activity an older reader shows anyway, so a
 * release without cards skips it and pages as before.
 *
 * @module
 */

import * as v from "valibot";
import { type Card, CardSchema } from "../protocol/tool-cards.ts";
import { redactSecrets } from "../util/redaction.ts";
import { IdSchema, SessionIdSchema, TimestampSchema } from "./record-field-schemas.ts";

/** The fields of a `tool_card` record (a table, as `records.ts` builds its variant from tables). */
export const TOOL_CARD = {
  v: v.literal(3),
  type: v.literal("tool_card"),
  ignorable: v.literal(true),
  session_id: SessionIdSchema,
  at: TimestampSchema,
  turn_id: IdSchema,
  activity_id: IdSchema,
  card_id: IdSchema,
  card: CardSchema,
};

/**
 * `card` with every text in it redacted with `secrets`, as the history
 * redacts every text it shows with the secrets of the child that pages it
 * (a value can be a secret to it and not to the child that saved the card).
 * Only texts: the card's enums and numbers are never touched.
 */
export function redactedCard(card: Card, secrets: readonly string[]): Card {
  const shown = (text: string) => redactSecrets(text, secrets);
  const { shell, diff, mcp } = card;
  return {
    ...card,
    tool: shown(card.tool),
    summary: shown(card.summary),
    path: card.path === null ? null : shown(card.path),
    diff: diff === null ? null : { ...diff, text: shown(diff.text) },
    shell: shell === null ? null : {
      ...shell,
      command: shown(shell.command),
      output: shell.output === null ? null : { ...shell.output, head: shown(shell.output.head), tail: shown(shell.output.tail) },
    },
    ...(mcp === undefined ? {} : { mcp: mcp === null ? null : { ...mcp, server: shown(mcp.server), tool: shown(mcp.tool), arguments: shown(mcp.arguments) } }),
  };
}
