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
import { type MethodResult, RESULTS } from "../protocol/results.ts";

/** One request the client sends. */
export type ClientMethod = MethodName | typeof AGENT_INFO;

/** The params of request `M`. */
export type ClientParams<M extends ClientMethod> = M extends MethodName ? MethodParams<M> : Record<never, never>;

/** The result of request `M`. */
export type ClientResult<M extends ClientMethod> = M extends MethodName ? MethodResult<M> : v.InferOutput<typeof AgentInfoResultSchema>;

/** The result schema of every request the client sends. */
export const CLIENT_RESULTS: { readonly [M in ClientMethod]: v.GenericSchema } = { ...RESULTS, [AGENT_INFO]: AgentInfoResultSchema };
