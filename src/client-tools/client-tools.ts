/**
 * The tools a client registered with `client.tools`, as the runner's
 * external tools port (`runner/tools/external.ts`), beside the MCP servers'
 * (docs/features/local-agent-client-tools.md). The set is fixed at startup:
 * nothing refreshes, nothing stops, so there is never a notice. This module
 * is the entry of a chunk the workers load only when a registry was
 * admitted, so a child without client tools loads none of this code.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { ClientToolSpec } from "../protocol/client-tool-registry.ts";
import type { WorkerReplies } from "../protocol/replies.ts";
import type { ExternalNotice, ExternalTool, ExternalTools } from "../runner/tools/external.ts";
import { clientToolPolicy, type ClientToolsSettings } from "../config/client-tools-settings.ts";
import { ClientToolCalls } from "./calls.ts";
import { clientTool } from "./client-tool.ts";

/** A child's client tools: what the runs offer, and where results are answered. */
export interface ClientToolSet {
  /** The tools, for the run configuration. */
  readonly tools: ExternalTools;
  /** The pending calls, for `client.tool.result`. */
  readonly calls: ClientToolCalls;
}

/** The client tools of `registry` under `settings`' policies, timed by `runtime` and answering through `replies`. */
export function clientToolSet(
  registry: readonly ClientToolSpec[],
  settings: ClientToolsSettings | undefined,
  runtime: Pick<Runtime, "setTimer">,
  replies: WorkerReplies,
): ClientToolSet {
  const calls = new ClientToolCalls(runtime, replies);
  const tools = new Map<string, ExternalTool>();
  for (const spec of registry) {
    const tool = clientTool(spec, clientToolPolicy(spec.name, settings), calls);
    tools.set(tool.name, tool);
  }
  const offered = Object.freeze([...tools.values()]);
  const none: readonly ExternalNotice[] = Object.freeze([]);
  return {
    calls,
    tools: {
      refresh: () => Promise.resolve(),
      offered: () => offered,
      find: (name) => tools.get(name),
      takeNotices: () => none,
    },
  };
}
