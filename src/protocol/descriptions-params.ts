/**
 * Descriptions of every method's params (`docs/schema/params/`), from the
 * spec's operation sections and the negotiated extensions
 * (docs/features/local-agent-extensions.md). See `describe.ts` for why
 * they are a table.
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import { ErrorCode } from "./errors.ts";
import { METHODS } from "./methods.ts";
import { EffortRequestSchema } from "./selection-schemas.ts";

const ATTACHED = "The attached session's id (from `session.create` or `session.open`).";
const LIMIT = "Entries per page, 1-100, default 100. A page may hold fewer to fit its byte bound: follow `next_cursor`, not the count.";

/** Paged params' fields, for the snapshot (or pass) that `what` names. */
function paged(what: string): { revision: string; cursor: string; limit: string } {
  return {
    revision: `The ${what}'s revision from its previous page; null or omitted (with cursor) to start a fresh ${what}.`,
    cursor: `The previous page's \`next_cursor\`; null or omitted (with revision) to start a fresh ${what}. Revision and cursor are both set or both null.`,
    limit: LIMIT,
  };
}

const [keep, reset, set] = EffortRequestSchema.options;

/** Descriptions of every params object. */
export const PARAMS_DESCRIPTIONS: Descriptions = new Map([
  describe(METHODS["initialize"], "`initialize` params: the capabilities this client requires.", {
    required_capabilities:
      `Capability names this client requires (method names, and \`run.usage\`): at most 16, distinct. One the child does not serve fails the request with \`${ErrorCode.unsupportedCapability}\`; the negotiated extensions (\`session.discover\`, \`model.catalog.status\`, \`model.refresh\`, \`operation.cancel\`, and the \`run.usage\` event) work only when named here. With \`client.tools\` the bound is 18 names.`,
    client_tools: "The tools this client lends the agent (`client.tools`, docs/features/local-agent-client-tools.md): 1-32 of `{ name, description, input_schema, timeout_ms? }`. Present exactly when `client.tools` is required.",
  }),
  // `status`, `shutdown`, `session.create` and `model.catalog.status` share this one object.
  describe(METHODS["status"], "No params: exactly `{}`.", {}),
  describe(METHODS["session.open"], "`session.open` params: reattach one stored session (or this child's lazy handle) by its exact id.", {
    session_id: "The session's exact id: `[A-Za-z0-9_-]`, 1-64 bytes. Never a prefix, and never a fallback to the most recent session.",
  }),
  describe(METHODS["history.page"], "`history.page` params: one page of the attached session's history at one revision.", {
    session_id: ATTACHED,
    revision:
      `The history revision to page: from \`session.create\`, \`session.open\`, \`run.finished\` or \`selection.set\` (\`history_revision\`). A stale one is \`${ErrorCode.staleRevision}\`.`,
    cursor: "The previous page's `next_cursor`; null or omitted for the first page.",
  }),
  describe(METHODS["turn.start"], "`turn.start` params: run one turn in the attached session.", {
    session_id: ATTACHED,
    prompt: "The user's prompt: at most 16,384 UTF-8 bytes (`prompt_bytes`), with at least one character that is not white space.",
  }),
  describe(METHODS["turn.cancel"], "`turn.cancel` params: ask the active run to stop.", {
    session_id: ATTACHED,
    run_id: `The active run's id, from \`turn.start\`; another is \`${ErrorCode.staleRun}\`.`,
  }),
  describe(METHODS["approval.answer"], "`approval.answer` params: answer one pending approval of the active run.", {
    session_id: ATTACHED,
    run_id: "The run that asked.",
    approval_id: "The `approval_id` of its `approval.requested` event.",
    allow: "True allows the action (once, or for the session with `scope`); false denies it.",
    scope: `With \`approval.scope\` negotiated only: \`once\` (the default) or \`session\`, which also allows every later call of this session with the request's \`scope_key\`; \`session\` is accepted only when the request offered it. Sent by a client that did not negotiate it: \`${ErrorCode.invalidParams}\`.`,
  }),
  describe(METHODS["session.list"], "`session.list` params: the first page of a fresh discovery snapshot, or the next page of the current one.", paged("snapshot")),
  describe(METHODS["session.discover"], "`session.discover` params (negotiated): the first page of a fresh discovery pass, or the next page of the current one.", paged("pass")),
  describe(METHODS["model.catalog"], "`model.catalog` params: the first page of a fresh catalog snapshot, or the next page of the current one.", paged("snapshot")),
  describe(METHODS["model.refresh"], "`model.refresh` params (negotiated): fetch one provider's model list from its endpoint into the local cache.", {
    provider: "An admitted provider's name (a built-in or an endpoint from settings).",
  }),
  describe(METHODS["selection.set"], "`selection.set` params: choose the attached session's provider, model and reasoning effort; stored in the session, never in settings.", {
    session_id: ATTACHED,
    selection_revision: `\`status.selection.revision\` as last seen; an older one is \`${ErrorCode.staleSelection}\`.`,
    catalog_revision: `The revision of the \`model.catalog\` snapshot the choice was picked from; a replaced snapshot is \`${ErrorCode.staleCatalog}\`.`,
    provider: "The choice's `provider`, exactly as `model.catalog` spelled it: 1-256 safe UTF-8 bytes.",
    model: "The choice's `model`, exactly as `model.catalog` spelled it: 1-256 safe UTF-8 bytes.",
    effort: "The reasoning effort request, one of three objects; omitted means `{ \"mode\": \"keep\" }`.",
  }),
  describe(keep, `Keep the effort requested before (not a guessed default); a new model that cannot take it is \`${ErrorCode.effortUnsupported}\`.`, {
    mode: "`keep`.",
  }),
  describe(reset, "Reset to no explicit effort override: the provider's own default, whatever it is.", { mode: "`default`." }),
  describe(set, "Request one explicit effort, one of the choice's `permitted_efforts` (`default` is its own mode).", {
    mode: "`set`.",
    value: "The effort.",
  }),
  describe(METHODS["operation.cancel"], "`operation.cancel` params (negotiated): cancel one pending request of this child.", {
    id: "The id of the pending request to cancel.",
  }),
]);

