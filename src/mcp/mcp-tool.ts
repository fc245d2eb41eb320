/**
 * An MCP server's tool as the runner sees it (`ExternalTool`): offered
 * under its exposed name with the server's description and input schema,
 * its policy from the server definition (by the server's own tool name,
 * `ask` when none is set), and an approval prompt that names the server and
 * the tool and shows the arguments exactly as they will be sent (compact
 * JSON, invisible characters escaped). As for built-in tools, a prompt that
 * cannot be shown whole within 1,024 bytes is not offered: the model is told
 * why. The activity summary names server and tool, never the arguments.
 *
 * @module
 */

import type { ExternalTool } from "../runner/tools/external.ts";
import { finishResult, showExactly, showJsonExactly } from "../runner/tools/tool-text.ts";
import type { PreparedCall, ToolContext, ToolResult } from "../runner/tools/tool.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import { ownValue } from "../util/own.ts";
import { callResult, resultKind } from "./call-result.ts";
import type { McpConnection } from "./connection.ts";
import type { ListedTool } from "./tool-list.ts";

/** Why a call whose arguments are too long to show was refused, for the model. */
export const ARGUMENTS_TOO_LONG = "The arguments are too long to show whole in the approval prompt (1,024 bytes), so the call " +
  "was not offered for approval. Call the tool with shorter arguments.";

const POLICIES: ReadonlySet<string> = new Set(["allow", "ask", "deny"]);

/** The policy of `tool` on `connection`'s server: its definition's, else `ask`. */
function policyOf(connection: McpConnection, tool: string): ApprovalPolicy {
  const configured = ownValue(connection.definition.toolPolicies, tool);
  return configured !== undefined && POLICIES.has(configured) ? configured : "ask";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `listed`, a tool of `connection`'s server, as an external tool. */
export function mcpTool(connection: McpConnection, listed: ListedTool): ExternalTool {
  return {
    name: listed.exposed,
    description: listed.description,
    parameters: listed.parameters,
    policy: policyOf(connection, listed.name),
    prepare: (args, context) => Promise.resolve(prepare(connection, listed, args, context)),
  };
}

function prepare(connection: McpConnection, listed: ListedTool, args: unknown, context: ToolContext): PreparedCall | ToolResult {
  const server = connection.server;
  const tool = showExactly(listed.name);
  const label = { server, tool, timeoutMs: connection.definition.toolTimeoutMs };
  // Nobody is asked to approve a call that cannot happen.
  if (connection.stopped) return callResult({ kind: "stopped" }, label, context.secrets);
  if (!isRecord(args)) {
    return finishResult(false, "The arguments must be a JSON object.", `${server} ${tool}: invalid arguments`, context.secrets);
  }
  return {
    action: `Call MCP tool ${tool} of server ${showExactly(server)} with arguments ${showJsonExactly(args)}`,
    activity: `MCP server ${showExactly(server)}, tool ${tool}`,
    tooLongToShow: ARGUMENTS_TOO_LONG,
    mustAsk: false,
    // A session grant covers this server's tool, whatever the arguments, by the tool's own name as shown: the
    // exposed name alone is lossy (`a.b` and `a_b` share it), and a changed list may put another tool behind it.
    scopeTarget: tool,
    facts: { kind: "mcp", server, tool: listed.name, arguments: args },
    run: async () => {
      // A server that stops after this check was sent the call: what its tool did is unknown then.
      const sent = !connection.stopped;
      const outcome = await connection.call(listed.name, args, context.signal);
      const unanswered = sent && (outcome.kind === "timeout" || outcome.kind === "stopped");
      return { ...callResult(outcome, label, context.secrets), facts: { kind: "mcp", result: resultKind(outcome), unanswered } };
    },
  };
}
