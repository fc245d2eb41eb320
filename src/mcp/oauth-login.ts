/**
 * The OAuth login of one HTTP server, `magi-code mcp login`: the SDK's
 * authorization code flow with PKCE. A loopback listener
 * (`Runtime.listenLoopback`) receives the redirect; the authorization URL is
 * handed to `show` (the command prints it for the person to open); the
 * tokens are stored in the tokens file (`oauth-tokens.ts`). Then the server
 * is connected once more the way startup connects it, with the stored login,
 * to prove it works.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import type { McpServerDefinition } from "./definition.ts";
import { McpConnection } from "./connection.ts";
import { openServer } from "./open.ts";
import { StoredOAuthProvider } from "./oauth-provider.ts";
import { readMcpTokens, storedFor } from "./oauth-tokens.ts";
import { StreamableHTTPClientTransport } from "./sdk.ts";

/** How long the login waits for the browser to come back. */
export const LOGIN_WAIT_MS = 300_000;

/** How a login ended. */
export type LoginOutcome =
  | { readonly ok: true; readonly tools: number }
  | { readonly ok: false; readonly reason: "not_required" | "listen_failed" | "refused" | "timeout" | "failed" | "unusable" };

const PAGE_DONE = "magi-code: the login is complete; you can close this page.";
const PAGE_REFUSED = "magi-code: the login was refused or failed; see the terminal.";

/** Logs in to `definition`'s server, storing the tokens under `home`. */
export async function loginMcpServer(
  runtime: Runtime,
  home: string,
  definition: Extract<McpServerDefinition, { transport: "http" }>,
  show: (url: URL) => void | Promise<void>,
): Promise<LoginOutcome> {
  const state = runtime.randomUUID();
  let settle: (code: string | null) => void = () => {};
  const redirected = new Promise<string | null>((resolve) => (settle = resolve));
  let listener;
  try {
    listener = await runtime.listenLoopback((method, target) => {
      const url = new URL(target, "http://127.0.0.1");
      if (method !== "GET" || url.pathname !== "/callback") return { status: 404, body: "Not found" };
      // Another page's redirect (a stale tab) is not this login's answer.
      if (url.searchParams.get("state") !== state) return { status: 400, body: PAGE_REFUSED };
      const code = url.searchParams.get("code");
      settle(code);
      return code === null ? { status: 400, body: PAGE_REFUSED } : { status: 200, body: PAGE_DONE };
    });
  } catch {
    return { ok: false, reason: "listen_failed" };
  }
  const target = { name: definition.name, url: definition.url };
  let shown: Promise<void> | null = null;
  const provider = new StoredOAuthProvider(runtime, home, target, null, {
    kind: "login",
    redirectUrl: `http://127.0.0.1:${listener.port}/callback`,
    state,
    authorize: (url) => void (shown = Promise.resolve(show(url))),
  });
  const first = new McpConnection(runtime, definition, { authProvider: provider });
  try {
    try {
      await first.client.connect(first.transport, { timeout: definition.startupTimeoutMs });
      return { ok: false, reason: "not_required" };
    } catch {
      if (shown === null) return { ok: false, reason: "failed" };
    }
    await shown;
    const wait = runtime.setTimer(LOGIN_WAIT_MS, () => settle(""));
    const code = await redirected;
    wait.dispose();
    if (code === "") return { ok: false, reason: "timeout" };
    if (code === null) return { ok: false, reason: "refused" };
    const transport = first.transport;
    if (!(transport instanceof StreamableHTTPClientTransport)) return { ok: false, reason: "failed" };
    try {
      await transport.finishAuth(code);
    } catch {
      return { ok: false, reason: "failed" };
    }
  } finally {
    await first.close(runtime);
    await listener.close();
  }
  return await verify(runtime, home, definition);
}

/** Connects the server the way startup does, with the login just stored. */
async function verify(runtime: Runtime, home: string, definition: Extract<McpServerDefinition, { transport: "http" }>): Promise<LoginOutcome> {
  const read = await readMcpTokens(runtime, home);
  const stored = read.ok ? storedFor(read.servers, definition.name, definition.url) : null;
  if (stored === null || stored.tokens === null) return { ok: false, reason: "failed" };
  const provider = new StoredOAuthProvider(runtime, home, { name: definition.name, url: definition.url }, stored, { kind: "startup" });
  const opened = await openServer(runtime, definition, new AbortController().signal, { authProvider: provider });
  if (!opened.ok) return { ok: false, reason: "unusable" };
  const tools = opened.connection.tools.length;
  await opened.connection.close(runtime);
  return { ok: true, tools };
}
