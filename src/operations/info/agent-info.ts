/**
 * The `agent.info` result (`docs/features/local-agent-extensions.md`): what
 * the ready child runs, read from its admitted startup snapshot and the
 * connected MCP servers' current state. It names things and says where
 * they stand; it never carries a path, a command, an argument, a matcher,
 * an environment value or a URL, and every text passes the child's
 * redaction of known secrets. Loaded on the first `agent.info`, so a child
 * never asked loads none of it.
 *
 * @module
 */

import type { StartupSnapshot } from "../../admission/startup.ts";
import { delegableProfiles } from "../../agents/setup.ts";
import {
  AGENT_INFO_DESCRIPTION_CHARS,
  AGENT_INFO_RESULT_BYTES,
  type AgentInfoResult,
} from "../../protocol/agent-info.ts";
import { redactSecrets } from "../../util/redaction.ts";

type Lists = Omit<AgentInfoResult, "profile" | "omitted">;

/** The order lists are filled in when the byte bound is reached: the short, fixed-size entries first. */
const FILL_ORDER = ["hooks", "mcp_servers", "subagents", "skills"] as const satisfies readonly (keyof Lists)[];

const encoder = new TextEncoder();
const bytes = (value: unknown) => encoder.encode(JSON.stringify(value)).length;

/** `text` cut to the description bound, in code points, the cut marked by a final `…`. */
function clip(text: string): string {
  const points = [...text];
  return points.length <= AGENT_INFO_DESCRIPTION_CHARS ? text : `${points.slice(0, AGENT_INFO_DESCRIPTION_CHARS - 1).join("")}…`;
}

/** Every entry of each list, before the byte bound: connected servers and skipped ones in name order. */
function allLists(snapshot: StartupSnapshot, text: (value: string) => string): Lists {
  const connected = (snapshot.mcp?.servers ?? []).map((server) => ({
    name: text(server.name),
    state: server.stopped ? "stopped" as const : "connected" as const,
    tools: server.tools.length,
  }));
  const skipped = (snapshot.skippedMcp ?? []).map((server) => ({ name: text(server.name), state: server.state, tools: 0 }));
  return {
    skills: (snapshot.skills?.skills ?? []).map((skill) => ({ name: text(skill.name), description: clip(text(skill.description)), scope: skill.scope })),
    mcp_servers: [...connected, ...skipped].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    hooks: (snapshot.hookStates ?? []).map(({ event, scope, approved }) => ({ event, scope, approved })),
    subagents: delegableProfiles(snapshot.profiles.all, snapshot.settings.agent?.disabled_subagents).map((profile) => ({ name: text(profile.name), description: clip(text(profile.description)) })),
  };
}

/**
 * What `snapshot`'s child runs, with `secrets` redacted from every text, at
 * most {@link AGENT_INFO_RESULT_BYTES} serialized: each list keeps the
 * entries that fit, in {@link FILL_ORDER}, and `omitted` counts the rest.
 */
export function agentInfo(snapshot: StartupSnapshot, secrets: readonly string[]): AgentInfoResult {
  const text = (value: string) => redactSecrets(value, secrets);
  const { primary } = snapshot.profiles;
  const lists = allLists(snapshot, text);
  const omitted = { skills: 0, mcp_servers: 0, hooks: 0, subagents: 0 };
  const kept: { -readonly [K in keyof Lists]: Lists[K][number][] } = { skills: [], mcp_servers: [], hooks: [], subagents: [] };
  const profile = { name: text(primary.name), description: clip(text(primary.description)) };
  // Counts at their largest, so the bytes of the final counts never exceed what was budgeted for them.
  const widest = { skills: lists.skills.length, mcp_servers: lists.mcp_servers.length, hooks: lists.hooks.length, subagents: lists.subagents.length };
  let used = bytes({ profile, ...kept, omitted: widest });
  for (const name of FILL_ORDER) {
    for (const entry of lists[name]) {
      // One more entry costs its bytes and a separating comma.
      const cost = bytes(entry) + 1;
      if (omitted[name] > 0 || used + cost > AGENT_INFO_RESULT_BYTES) {
        omitted[name] += 1;
        continue;
      }
      (kept[name] as unknown[]).push(entry);
      used += cost;
    }
  }
  return { profile, ...kept, omitted };
}
