/**
 * One connected MCP server: the SDK `Client` over our stdio transport or
 * the SDK's Streamable HTTP transport (through the runtime's fetch), its
 * admitted tools, and what happened to it. The client advertises no
 * capabilities (no sampling, elicitation or roots), so a server cannot ask
 * the user anything. Tool calls, list refreshes after
 * `notifications/tools/list_changed` and closing live here; opening (the
 * handshake and the first list, and what a failure is called) is in
 * `open.ts`.
 *
 * @module
 */

import {
  type CallToolResult,
  CallToolResultSchema,
  Client,
  McpError,
  type OAuthClientProvider,
  type OAuthTokens,
  ResultSchema,
  RpcErrorCode as RpcCode,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
  type Transport,
} from "./sdk.ts";
import type { Runtime } from "../host/runtime.ts";
import { settlesWithin } from "../util/async.ts";
import { VERSION } from "../util/version.ts";
import { definitionSecrets, type McpServerDefinition } from "./definition.ts";
import { runtimeFetchLike } from "./http-fetch.ts";
import { MAX_LIST_PAGES, MAX_TOOLS_PER_SERVER, SESSION_DELETE_GRACE_MS } from "./limits.ts";
import type { ServerProcess } from "./server-process.ts";
import { StdioTransport } from "./stdio-transport.ts";
import { admitTools, type ListAdmission, type ListedTool } from "./tool-list.ts";

/** How one tool call ended. */
export type CallOutcome =
  | { readonly kind: "result"; readonly result: CallToolResult }
  | { readonly kind: "cancelled" | "timeout" | "stopped" | "oversized" | "invalid" | "unreachable" }
  | { readonly kind: "error"; readonly code: number; readonly message: string };

/** Why a pending request of this connection was aborted by the connection itself. */
const OVERSIZED = "The server sent a message over the size bound";

/**
 * An HTTP server's OAuth login whose tokens can be read at once, and which
 * says when they change (`oauth-provider.ts`), so they can be redacted.
 */
export type McpAuth = Omit<OAuthClientProvider, "tokens"> & {
  tokens(): OAuthTokens | undefined;
  onTokensSaved(listener: () => void): void;
};

/** What a connection may start from besides its definition. */
export interface ConnectionStart {
  /** An HTTP server's stored OAuth login (`oauth-provider.ts`). */
  readonly authProvider?: McpAuth | undefined;
  /** A stdio server's process, spawned already (`start.ts`): taken over, and its startup bound runs from its spawn. */
  readonly launched?: ServerProcess | undefined;
}

/** A server's transport and client, and its state. */
export class McpConnection {
  /** The definition it was started from. */
  readonly definition: McpServerDefinition;
  /** The SDK client. */
  readonly client: Client;
  /** The transport the client runs on. */
  readonly transport: Transport;
  /** Whether an HTTP server answered 401 (a login is needed, which startup never does). */
  unauthorized = false;
  #tools: readonly ListedTool[] = [];
  #state: "open" | "stopped" | "closed" = "open";
  #stale = false;
  #stopReported = false;
  readonly #pending = new Set<AbortController>();
  readonly #authProvider: McpAuth | undefined;
  readonly #runtime: Runtime;
  #closing: Promise<void> | null = null;

  /**
   * Prepares the connection to `definition`'s server; `open.ts` connects it.
   */
  constructor(runtime: Runtime, definition: McpServerDefinition, { authProvider, launched }: ConnectionStart = {}) {
    this.definition = definition;
    this.#authProvider = authProvider;
    this.#runtime = runtime;
    const hooks = { oversized: () => this.#abortPending(OVERSIZED) };
    this.transport = definition.transport === "stdio"
      ? new StdioTransport(runtime, definition, hooks, launched)
      : new StreamableHTTPClientTransport(new URL(definition.url), {
        fetch: runtimeFetchLike(runtime, {
          status: (status) => void (status === 401 && (this.unauthorized = true)),
          oversized: hooks.oversized,
        }),
        requestInit: { headers: httpHeaders(definition) },
        ...(authProvider === undefined ? {} : { authProvider }),
      });
    this.client = new Client({ name: "magi-code", version: VERSION }, { capabilities: {} });
    this.client.onclose = () => {
      if (this.#state === "open") this.#state = "stopped";
    };
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#stale = true;
    });
  }

  /** The server's settings name. */
  get server(): string {
    return this.definition.name;
  }

  /** The admitted tools, as last listed. */
  get tools(): readonly ListedTool[] {
    return this.#tools;
  }

  /**
   * The secrets this connection holds: its definition's (`definitionSecrets`)
   * and the OAuth access and refresh tokens of its login as they are now.
   */
  secrets(): string[] {
    const tokens = this.#authProvider?.tokens();
    const oauth = tokens === undefined ? [] : [tokens.access_token, tokens.refresh_token];
    return [...definitionSecrets(this.definition), ...oauth.filter((value): value is string => typeof value === "string")];
  }

  /** Calls `listener` whenever {@link secrets} gained a value: the login's tokens were refreshed. */
  onSecretsChanged(listener: () => void): void {
    this.#authProvider?.onTokensSaved(listener);
  }

  /** Whether the server stopped by itself (its process exited or its output ended). */
  get stopped(): boolean {
    return this.#state === "stopped";
  }

  /**
   * Asks the process table whether a stdio server still exists, so one that
   * died a moment ago counts as stopped before its exit event arrives (a run
   * starting right then reports it, rather than the next run). Its group is
   * then cleaned up as for any stopped server.
   */
  checkAlive(runtime: Runtime): void {
    const transport = this.transport;
    if (this.#state !== "open" || !(transport instanceof StdioTransport) || transport.pid === null) return;
    if (runtime.isProcessAlive(transport.pid)) return;
    this.#state = "stopped";
    void transport.close();
  }

  /** True once for a stopped server: the one run that reports it. */
  takeStopReport(): boolean {
    if (this.#state !== "stopped" || this.#stopReported) return false;
    this.#stopReported = true;
    return true;
  }

  /**
   * Lists every page of tools and admits them, each request bounded by
   * `timeoutMs`. The tools so far are admitted after every page, so a list
   * over its bounds (tool count, schema bytes) or with a bad tool fails at
   * the page that breaks them: at most one page more than the bounds is
   * ever held, and no further page is asked for. Throws when a request fails.
   */
  async list(signal: AbortSignal, timeoutMs: number): Promise<ListAdmission> {
    const raw: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#request(signal, (options) =>
        this.client.request({ method: "tools/list", params: cursor === undefined ? {} : { cursor } }, ResultSchema, { ...options, timeout: timeoutMs }));
      const tools = result.tools;
      if (!Array.isArray(tools) || raw.length + tools.length > MAX_TOOLS_PER_SERVER) return { ok: false, reason: "list_failed" };
      raw.push(...tools);
      const admitted = admitTools(this.server, raw);
      if (!admitted.ok || result.nextCursor === undefined) return admitted;
      if (typeof result.nextCursor !== "string") return { ok: false, reason: "list_failed" };
      cursor = result.nextCursor;
    }
    return { ok: false, reason: "list_failed" };
  }

  /** Records the admitted tools of the last list. */
  adopt(tools: readonly ListedTool[]): void {
    this.#tools = tools;
  }

  /**
   * Lists again if the server said its tools changed since the last list
   * (`notifications/tools/list_changed`): the admitted list, `failed`, or
   * null when nothing changed or the server is not open.
   */
  async relist(signal: AbortSignal): Promise<ListAdmission | "failed" | null> {
    if (!this.#stale || this.#state !== "open") return null;
    this.#stale = false;
    // One timer for the whole list, every page: a server cannot stretch a relist to pages × the tool timeout.
    const whole = new AbortController();
    const forward = () => whole.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    const timer = this.#runtime.setTimer(this.definition.toolTimeoutMs, () => whole.abort("timeout"));
    try {
      return await this.list(whole.signal, this.definition.toolTimeoutMs);
    } catch {
      // A cancelled run did not learn anything: the next one lists again.
      if (!signal.aborted) return "failed";
      this.#stale = true;
      return null;
    } finally {
      timer.dispose();
      signal.removeEventListener("abort", forward);
    }
  }

  /** Calls `tool` with `args`, bounded by the tool timeout; `signal` cancels it (`notifications/cancelled`). Never throws. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
    if (this.#state !== "open") return { kind: "stopped" };
    let controller: AbortController | null = null;
    try {
      const result = await this.#request(signal, (options, call) => {
        controller = call;
        return this.client.request({ method: "tools/call", params: { name: tool, arguments: args } }, CallToolResultSchema, {
          ...options,
          timeout: this.definition.toolTimeoutMs,
        });
      });
      return { kind: "result", result };
    } catch (error) {
      if (signal.aborted) return { kind: "cancelled" };
      if ((controller as AbortController | null)?.signal.reason === OVERSIZED) return { kind: "oversized" };
      if (this.#state !== "open") return { kind: "stopped" };
      if (!(error instanceof McpError)) return { kind: isParseError(error) ? "invalid" : "unreachable" };
      if (error.code === RpcCode.RequestTimeout) return { kind: "timeout" };
      if (error.code === RpcCode.ConnectionClosed) return { kind: "stopped" };
      return { kind: "error", code: error.code, message: error.message };
    }
  }

  /**
   * Ends the session and stops the server: an HTTP server first gets its
   * session `DELETE` (at most {@link SESSION_DELETE_GRACE_MS}); a stdio
   * server the staged stop of `stdio-transport.ts`. Idempotent.
   */
  close(runtime: Runtime): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#state === "open") this.#state = "closed";
      const transport = this.transport;
      if (transport instanceof StreamableHTTPClientTransport) {
        const setTimer = (ms: number, callback: () => void) => runtime.setTimer(ms, callback);
        await settlesWithin(transport.terminateSession(), SESSION_DELETE_GRACE_MS, setTimer);
      }
      await transport.close().catch(() => {});
      if (transport instanceof StdioTransport) await transport.stopped;
    })();
    return this.#closing;
  }

  /** Runs one request with its own abort controller, which `signal` and an oversized message abort. */
  async #request<T>(signal: AbortSignal, send: (options: { signal: AbortSignal }, call: AbortController) => Promise<T>): Promise<T> {
    const call = new AbortController();
    const forward = () => call.abort(signal.reason ?? "cancelled");
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    this.#pending.add(call);
    try {
      return await send({ signal: call.signal }, call);
    } finally {
      this.#pending.delete(call);
      signal.removeEventListener("abort", forward);
    }
  }

  #abortPending(reason: string): void {
    for (const call of this.#pending) call.abort(reason);
  }
}

/** A zod validation failure of a result (the SDK rejects with the validator's error). */
function isParseError(error: unknown): boolean {
  return typeof error === "object" && error !== null && Array.isArray((error as { issues?: unknown }).issues);
}

/** The configured headers, with the bearer token as `Authorization` when one is set. */
function httpHeaders(definition: Extract<McpServerDefinition, { transport: "http" }>): Record<string, string> {
  const headers: Record<string, string> = { ...definition.headers };
  if (definition.bearerToken !== null) headers.authorization = `Bearer ${definition.bearerToken}`;
  return headers;
}
