/**
 * The connected MCP servers of one child, for its lifetime: their tools as
 * the runner's external tools (`runner/tools/external.ts`), what happened
 * to them since the last run asked, and closing them all. A server that
 * stops is never restarted: its tools stay callable by name (each call says
 * the server stopped) but are no longer offered, and one
 * `mcp_server_stopped` diagnostic reports it, in the run that notices it or
 * else the next one.
 *
 * @module
 */

import { DiagnosticCode } from "../protocol/errors.ts";
import type { Runtime } from "../host/runtime.ts";
import type { ExternalNotice, ExternalTool, ExternalTools } from "../runner/tools/external.ts";
import type { McpConnection } from "./connection.ts";
import { mcpTool } from "./mcp-tool.ts";
import { firstCollision, type ListedTool } from "./tool-list.ts";
import { StdioTransport } from "./stdio-transport.ts";

/** One connected server, as `mcp list` and tests see it. */
export interface McpServerView {
  /** The settings name. */
  readonly name: string;
  /** Its admitted tools. */
  readonly tools: readonly ListedTool[];
  /** Whether it stopped by itself. */
  readonly stopped: boolean;
  /** The process (group) id of a stdio server, null for HTTP. */
  readonly pid: number | null;
}

/** Every connected server and its tools; closes them all for good. */
export class McpManager implements ExternalTools {
  readonly #runtime: Runtime;
  readonly #connections: readonly McpConnection[];
  #tools = new Map<string, { readonly tool: ExternalTool; readonly connection: McpConnection }>();
  readonly #unchanged = new Set<string>();
  #closing: Promise<void> | null = null;

  /** Takes over `connections`, whose exposed tool names are distinct. */
  constructor(runtime: Runtime, connections: readonly McpConnection[]) {
    this.#runtime = runtime;
    this.#connections = connections;
    this.#rebuild();
  }

  /** The servers, in definition order. */
  get servers(): readonly McpServerView[] {
    return this.#connections.map((connection) => ({
      name: connection.server,
      tools: connection.tools,
      stopped: connection.stopped,
      pid: connection.transport instanceof StdioTransport ? connection.transport.pid : null,
    }));
  }

  /**
   * Before a model request: notes servers whose process is gone, and lists
   * again the servers that said their tools changed (a list that fails or
   * collides leaves the old one).
   */
  async refresh(signal: AbortSignal): Promise<void> {
    if (this.#closing !== null) return;
    for (const connection of this.#connections) connection.checkAlive(this.#runtime);
    const relisted = await Promise.all(this.#connections.map(async (connection) => ({ connection, listed: await connection.relist(signal) })));
    for (const { connection, listed } of relisted) {
      if (listed === null) continue;
      const others = this.#connections.filter((other) => other !== connection).map((other) => ({ server: other.server, tools: other.tools }));
      if (listed === "failed" || !listed.ok || firstCollision([...others, { server: connection.server, tools: listed.tools }]) !== null) {
        this.#unchanged.add(connection.server);
        continue;
      }
      connection.adopt(listed.tools);
    }
    this.#rebuild();
  }

  /** Every connected server's secrets (`McpConnection.secrets`), to redact wherever text leaves the process. */
  secrets(): string[] {
    return this.#connections.flatMap((connection) => connection.secrets());
  }

  /**
   * Calls `listener` with a server's secrets whenever they gained a value (a
   * login's tokens refreshed, during startup or a call), so the new ones are
   * redacted from then on, not from the next child on.
   */
  onSecretsChanged(listener: (secrets: readonly string[]) => void): void {
    for (const connection of this.#connections) connection.onSecretsChanged(() => listener(connection.secrets()));
  }

  /** The tools of every server still running. */
  offered(): readonly ExternalTool[] {
    return [...this.#tools.values()].filter(({ connection }) => !connection.stopped).map(({ tool }) => tool);
  }

  /** The tool exposed as `name`, whether or not its server still runs. */
  find(name: string): ExternalTool | undefined {
    return this.#tools.get(name)?.tool;
  }

  /** Servers that stopped, and changed lists that could not be taken, not reported yet. */
  takeNotices(): readonly ExternalNotice[] {
    const notices: ExternalNotice[] = [];
    for (const connection of this.#connections) {
      if (connection.takeStopReport()) {
        notices.push({
          code: DiagnosticCode.mcpServerStopped,
          summary: `The MCP server ${JSON.stringify(connection.server)} stopped; its tools fail until magi-code is restarted.`,
        });
      }
    }
    for (const server of this.#unchanged) {
      notices.push({
        code: DiagnosticCode.mcpToolsUnchanged,
        summary: `The MCP server ${JSON.stringify(server)} changed its tools, but the new list could not be read or used; its previous tools stay offered.`,
      });
    }
    this.#unchanged.clear();
    return notices;
  }

  /**
   * Closes every server: each is told first (stdin ended, or its session
   * `DELETE` sent) before any close is waited for. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= Promise.all(this.#connections.map((connection) => connection.close(this.#runtime))).then(() => {});
    return this.#closing;
  }

  #rebuild(): void {
    const tools = new Map<string, { readonly tool: ExternalTool; readonly connection: McpConnection }>();
    for (const connection of this.#connections) {
      for (const listed of connection.tools) tools.set(listed.exposed, { tool: mcpTool(connection, listed), connection });
    }
    this.#tools = tools;
  }
}
