/**
 * Every wire error code magi-code can send. Nothing else in the code base spells
 * a code string: failures travel as `{ ok: false, code: ErrorCode.x }` data and
 * become an `error` object once, when the response frame is encoded.
 *
 * @module
 */

/** The wire error codes of protocol version 1, grouped as the spec groups them. */
export const ErrorCode = {
  // Protocol errors.
  invalidFrame: "invalid_frame",
  invalidRequest: "invalid_request",
  invalidParams: "invalid_params",
  protocolMismatch: "protocol_mismatch",
  unsupportedMethod: "unsupported_method",
  unsupportedCapability: "unsupported_capability",
  notInitialized: "not_initialized",
  alreadyInitialized: "already_initialized",
  duplicateId: "duplicate_id",
  requestLimit: "request_limit",
  frameTooLarge: "frame_too_large",
  incompleteFrame: "incomplete_frame",
  // Startup errors.
  configurationInvalid: "configuration_invalid",
  providerUnavailable: "provider_unavailable",
  profileInvalid: "profile_invalid",
  mcpUnavailable: "mcp_unavailable",
  startupCancelled: "startup_cancelled",
  startupFailed: "startup_failed",
  // Session, history and operation errors.
  busy: "busy",
  staleSession: "stale_session",
  sessionMissing: "session_missing",
  sessionBusy: "session_busy",
  sessionInvalid: "session_invalid",
  cwdMismatch: "cwd_mismatch",
  historyLimit: "history_limit",
  staleRevision: "stale_revision",
  contentLimit: "content_limit",
  operationCancelled: "operation_cancelled",
  // Discovery errors (`session.list`).
  discoveryLimit: "discovery_limit",
  discoveryUnavailable: "discovery_unavailable",
  // Extension errors (docs/features/local-agent-extensions.md): `operation.cancel` naming no in-flight operation.
  staleOperation: "stale_operation",
  // `client.tool.result` naming no pending client tool call (docs/features/local-agent-client-tools.md).
  staleToolCall: "stale_tool_call",
  // `session.rewind.preview` and a restoring `session.rewind` over turns whose file checkpoints were evicted (docs/features/local-agent-extensions.md).
  checkpointsEvicted: "checkpoints_evicted",
  // Turn errors.
  staleRun: "stale_run",
  staleApproval: "stale_approval",
  executionFailed: "execution_failed",
  persistenceFailed: "persistence_failed",
  outputUnavailable: "output_unavailable",
  // Catalog and selection errors.
  catalogLimit: "catalog_limit",
  catalogUnavailable: "catalog_unavailable",
  staleCatalog: "stale_catalog",
  staleSelection: "stale_selection",
  selectionInvalid: "selection_invalid",
  effortUnsupported: "effort_unsupported",
} as const;

/**
 * Codes of `diagnostic` run events and `diagnostic` history records: what
 * went wrong, more precisely than a run's `error_code`, and never carrying
 * provider text.
 */
export const DiagnosticCode = {
  providerAuth: "provider_auth",
  providerRateLimited: "provider_rate_limited",
  providerServerError: "provider_server_error",
  providerBadRequest: "provider_bad_request",
  providerHttpError: "provider_http_error",
  providerUnreachable: "provider_unreachable",
  providerStreamTruncated: "provider_stream_truncated",
  providerStreamMalformed: "provider_stream_malformed",
  providerStreamError: "provider_stream_error",
  providerConnectionLost: "provider_connection_lost",
  outputTokenLimit: "output_token_limit",
  contentFiltered: "content_filtered",
  stepLimit: "step_limit",
  activityLimit: "activity_limit",
  persistenceDegraded: "persistence_degraded",
  historyUnavailable: "history_unavailable",
  sessionFull: "session_full",
  compactionFailed: "compaction_failed",
  compactionStopped: "compaction_stopped",
  contextFull: "context_full",
  mcpServerStopped: "mcp_server_stopped",
  mcpToolsUnchanged: "mcp_tools_unchanged",
  hookFailed: "hook_failed",
  hookBlockedPrompt: "hook_blocked_prompt",
} as const;

/** One diagnostic code. */
export type DiagnosticCode = typeof DiagnosticCode[keyof typeof DiagnosticCode];

/** One wire error code. */
export type ErrorCode = typeof ErrorCode[keyof typeof ErrorCode];

/** The startup failure codes, which `status.readiness` reports after a failed startup. */
export type StartupErrorCode =
  | typeof ErrorCode.configurationInvalid
  | typeof ErrorCode.providerUnavailable
  | typeof ErrorCode.profileInvalid
  | typeof ErrorCode.mcpUnavailable
  | typeof ErrorCode.startupCancelled
  | typeof ErrorCode.startupFailed;
