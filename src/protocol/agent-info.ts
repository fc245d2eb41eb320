/**
 * The negotiated read-only request `agent.info` (issue 28, capability
 * `agent.info`): what runs behind the window. Its result schema (the one
 * definition the child's producer, the client library and `docs/schema/`
 * share) and its bounds; its params are `AgentInfoParamsSchema` of
 * `schemas.ts`. It is no base method: it is not in
 * `METHODS`, so a client that did not require it gets exactly what it got
 * before the extension existed, `unsupported_method`
 * (`docs/features/local-agent-extensions.md`).
 *
 * @module
 */

import * as v from "valibot";
import type { Bool, Count, List, Obj, OneOf, Str } from "../util/schema-types.ts";
import { CountSchema, list } from "./schema-parts.ts";

/** The method and capability name. */
export const AGENT_INFO = "agent.info";

/** Longest description in a result, in code points; a longer one is cut and ends with `…`. */
export const AGENT_INFO_DESCRIPTION_CHARS = 512;

/** Most serialized bytes of one result; entries that would not fit are left out and counted in `omitted`. */
export const AGENT_INFO_RESULT_BYTES = 49_152;

/** Where an MCP server stands: it runs, or why it does not. */
export const MCP_SERVER_STATES = ["connected", "stopped", "not_approved", "disabled"] as const;

/** Where a skill or hook was configured: the user's own files, or the workspace's. */
export const CONFIG_SCOPES = ["user", "project"] as const;

type Named = { name: Str; description: Str };

const NamedSchema: Obj<Named> = v.object({ name: v.string(), description: v.string() });

/** One enabled skill. */
export const AgentInfoSkillSchema: Obj<Named & { scope: OneOf<typeof CONFIG_SCOPES> }> = v.object({
  name: v.string(),
  description: v.string(),
  scope: v.picklist(CONFIG_SCOPES),
});

/** One configured MCP server. */
export const AgentInfoMcpServerSchema: Obj<{ name: Str; state: OneOf<typeof MCP_SERVER_STATES>; tools: Count }> = v.object({
  name: v.string(),
  state: v.picklist(MCP_SERVER_STATES),
  tools: CountSchema,
});

/** One configured hook. */
export const AgentInfoHookSchema: Obj<{ event: Str; scope: OneOf<typeof CONFIG_SCOPES>; approved: Bool }> = v.object({
  event: v.string(),
  scope: v.picklist(CONFIG_SCOPES),
  approved: v.boolean(),
});

type Omitted = { skills: Count; mcp_servers: Count; hooks: Count; subagents: Count };

/** How many entries of each list the byte bound left out. */
export const AgentInfoOmittedSchema: Obj<Omitted> = v.object({ skills: CountSchema, mcp_servers: CountSchema, hooks: CountSchema, subagents: CountSchema });

/** The `agent.info` result. */
export const AgentInfoResultSchema: Obj<{
  profile: typeof NamedSchema;
  skills: List<typeof AgentInfoSkillSchema>;
  mcp_servers: List<typeof AgentInfoMcpServerSchema>;
  hooks: List<typeof AgentInfoHookSchema>;
  subagents: List<typeof NamedSchema>;
  omitted: typeof AgentInfoOmittedSchema;
}> = v.object({
  profile: NamedSchema,
  skills: list(AgentInfoSkillSchema),
  mcp_servers: list(AgentInfoMcpServerSchema),
  hooks: list(AgentInfoHookSchema),
  subagents: list(NamedSchema),
  omitted: AgentInfoOmittedSchema,
});

/** The `agent.info` result as the wire carries it. */
export type AgentInfoResult = v.InferOutput<typeof AgentInfoResultSchema>;

/** One named entry (the profile, a subagent profile). */
export const AgentInfoProfileSchema: typeof NamedSchema = NamedSchema;
