/**
 * What `docs/schema/` says about `agent.info`'s result and each of its
 * fields (`docs/features/local-agent-extensions.md` is the contract).
 *
 * @module
 */

import { describe, type Descriptions } from "./describe.ts";
import {
  AgentInfoHookSchema,
  AgentInfoMcpServerSchema,
  AgentInfoOmittedSchema,
  AgentInfoProfileSchema,
  AgentInfoResultSchema,
  AgentInfoSkillSchema,
} from "./agent-info.ts";

/** The descriptions of `agent.info`'s result objects. */
export const AGENT_INFO_DESCRIPTIONS: Descriptions = new Map([
  describe(AgentInfoResultSchema, "`agent.info` result (negotiated): what the ready child runs. Names and states only: no path, command, argument, environment value or secret.", {
    profile: "The primary profile: the agent this window runs as.",
    skills: "The enabled skills, in the order the model sees them.",
    mcp_servers: "Every configured MCP server, in name order, and where it stands.",
    hooks: "Every configured hook, in the order they run (by event, global before project).",
    subagents: "The profiles the task tool may delegate to: mode `subagent` or `all`, not in `agent.disabled_subagents`; in name order.",
    omitted: "How many entries of each list the result's byte bound left out (the lists keep the first ones).",
  }),
  describe(AgentInfoProfileSchema, "A profile: its name and description.", {
    name: "The profile's name.",
    description: "Its description, at most 512 code points (a longer one is cut and ends with `…`), known secrets redacted.",
  }),
  describe(AgentInfoSkillSchema, "An enabled skill.", {
    name: "The skill's name.",
    description: "Its description, at most 512 code points (a longer one is cut and ends with `…`), known secrets redacted.",
    scope: "`user` (from the user's own skill directories) or `project` (from the workspace's).",
  }),
  describe(AgentInfoMcpServerSchema, "A configured MCP server.", {
    name: "The server's settings name.",
    state: "`connected`; `stopped` (it exited after startup; its tools are no longer offered); `not_approved` (enabled, but its current definition is not approved, or its command cannot be found); `disabled` (its settings disable it).",
    tools: "The tools it listed (0 when it is not connected).",
  }),
  describe(AgentInfoHookSchema, "A configured hook.", {
    event: "The event it runs on (`PreToolUse`, `PostToolUse`, `UserPromptSubmit`, `Stop`).",
    scope: "`user` (global settings) or `project` (the workspace's settings).",
    approved: "Whether it runs: a global hook always does, a project hook once its current definition is approved.",
  }),
  describe(AgentInfoOmittedSchema, "Entries left out per list.", {
    skills: "Skills left out.",
    mcp_servers: "MCP servers left out.",
    hooks: "Hooks left out.",
    subagents: "Subagent profiles left out.",
  }),
]);
