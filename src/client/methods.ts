/**
 * The requests the client library sends: the base method table and the
 * negotiated requests beyond it (`agent.info`, which is no base method: a
 * child advertises it only to a client that required it), with the params
 * each takes and the schema each result is checked against.
 *
 * @module
 */

import type * as v from "valibot";
import { AGENT_INFO, AgentInfoResultSchema } from "../protocol/agent-info.ts";
import type { MethodName, MethodParams } from "../protocol/methods.ts";
import { ClientToolResultResultSchema, type MethodResult, RESULTS } from "../protocol/results.ts";

/** One request the client sends. */
export type ClientMethod = MethodName | typeof AGENT_INFO;

/** The params of request `M`. */
export type ClientParams<M extends ClientMethod> = M extends MethodName ? MethodParams<M> : Record<never, never>;

/** The result of request `M`. */
export type ClientResult<M extends ClientMethod> = M extends MethodName ? MethodResult<M> : v.InferOutput<typeof AgentInfoResultSchema>;

/** The result schema of every request the client sends. */
export const CLIENT_RESULTS: { readonly [M in ClientMethod]: v.GenericSchema } = { ...RESULTS, [AGENT_INFO]: AgentInfoResultSchema };

/**
 * What the client sends: a request, or the `client.tool.result` a negotiated
 * `client.tools` adds, which only the library's client tools send (it is no
 * {@link ClientMethod} a caller passes to `request()`).
 */
export type SentMethod = ClientMethod | "client.tool.result";

/** The result schema of everything the client sends. */
export const SENT_RESULTS: { readonly [M in SentMethod]: v.GenericSchema } = { ...CLIENT_RESULTS, "client.tool.result": ClientToolResultResultSchema };
