/**
 * The magi-code client library over web streams: {@link AgentClient}, the
 * {@link Run} it turns a `turn.start` into, the errors it fails with, and the
 * wire types and valibot schemas it validates with (the server's own). On
 * Node, `magi-code/client` adds `spawnAgent()` and `binPath`
 * (runtime/node-client.ts); everywhere else, hand `AgentClient` the child's
 * stdout and stdin as web streams.
 *
 * @module
 */

export { AgentClient, type AgentClientOptions, type AgentStreams, type RequestMethod } from "./client.ts";
export { type ClientToolAnswer, type ClientToolCallContext, type ClientToolDefinition, type ClientToolHandler } from "./client-tools.ts";
export {
  type AbortOutcome,
  ConnectionClosed,
  isProtocolError,
  ProtocolError,
  ProtocolViolation,
  RequestAborted,
  RequestRefused,
  SpawnError,
  type SpawnErrorDetails,
  type SpawnFailure,
} from "./errors.ts";
export { EXCLUSIVE, REQUEST_WINDOW, RUN_REQUEST_WINDOW, URGENT, URGENT_SLOTS } from "./outbox.ts";
export { CANCELLABLE, MAX_TIMEOUT_MS, type RequestOptions } from "./requests.ts";
export { type Approval, type ApprovalResolution, type ApprovalScope, Run, type RunCard, type RunFinished, type RunHandlers, type RunMessage, type RunUsage } from "./run.ts";
export { DiagnosticCode, ErrorCode } from "../protocol/errors.ts";
export { PROTOCOL, PROTOCOL_VERSION } from "../protocol/identity.ts";
export { type Limits, LIMITS } from "../protocol/limits.ts";
export { type MethodName, type MethodParams, METHODS } from "../protocol/methods.ts";
export { CAPABILITIES, type Capability, EXTENSION_CAPABILITIES } from "../protocol/negotiation.ts";
export { type AgentInfoResult, AgentInfoResultSchema } from "../protocol/agent-info.ts";
export { CLIENT_RESULTS, type ClientMethod, type ClientParams, type ClientResult } from "./methods.ts";
export { type HistoryEntry, type InitializeResult, type MethodResult, RESULTS, type StatusResult } from "../protocol/results.ts";
export { type EventData, type EventName, EVENTS, type WireEvent } from "../protocol/events.ts";
export { EventFrameSchema, OutputFrameSchema, RequestFrameSchema, ResponseFrameSchema } from "../protocol/envelopes.ts";
