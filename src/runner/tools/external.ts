/**
 * The runner's port for tools it does not build in: an MCP server's tools
 * are offered to the model next to the built-in ones and go through the
 * same approval path, but come from a layer above (`src/mcp/` implements
 * this port; the runner knows nothing of MCP). A run asks the port before
 * every model request for the tools to offer, and reports the notices it
 * hands out (a server that stopped) as `diagnostic` events, once each.
 *
 * @module
 */

import type { DiagnosticCode } from "../../protocol/errors.ts";
import type { ApprovalPolicy } from "../../policy/tool-policies.ts";
import type { JsonSchema, PreparedCall, ToolContext, ToolResult } from "./tool.ts";

/** A tool from outside the runner, called the way a built-in one is. */
export interface ExternalTool {
  /** The name the model calls it by; never a built-in tool's. */
  readonly name: string;
  /** What it does, for the model. */
  readonly description: string;
  /** Its input schema, for providers. */
  readonly parameters: JsonSchema;
  /** Its approval policy; the settings `tools` map (built-in tools only) never applies. */
  readonly policy: ApprovalPolicy;
  /**
   * Checks the model's parsed arguments and prepares the call, like
   * `Tool.prepare` (the runner adds the same safety net, see `invoke.ts`).
   */
  prepare(args: unknown, context: ToolContext): Promise<PreparedCall | ToolResult>;
}

/** Something a run reports once, as a `diagnostic` event and record. */
export interface ExternalNotice {
  readonly code: DiagnosticCode;
  /** Fixed English naming what it concerns; at most 1,024 bytes after redaction. */
  readonly summary: string;
}

/** Where a run gets its external tools. */
export interface ExternalTools {
  /** Brings the tool lists up to date before a model request (a server said its tools changed); never throws. */
  refresh(signal: AbortSignal): Promise<void>;
  /** The tools to offer the model now. */
  offered(): readonly ExternalTool[];
  /** The tool the model called by `name`, offered or not (a stopped server's tools answer that it stopped). */
  find(name: string): ExternalTool | undefined;
  /** The notices nobody has reported yet; each is handed out once. */
  takeNotices(): readonly ExternalNotice[];
}
