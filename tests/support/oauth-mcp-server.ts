/**
 * A loopback MCP server behind OAuth, for the `mcp login` tests: one origin
 * that is both the protected resource (`/mcp`, Streamable HTTP served by the
 * SDK's own server, one tool) and its authorization server (RFC 9728
 * resource metadata, RFC 8414 metadata, dynamic client registration, an
 * authorization endpoint that redirects at once, as an already signed-in
 * browser would, and a token endpoint checking PKCE and refresh tokens).
 * The test can expire every access token, or revoke every token, to see
 * what a child with a stored login does next, and issue a token pair
 * directly (a login stored without the browser). Its one tool, `whoami`,
 * answers with the access token it was called with. `node:http`, so it runs
 * under Node and Deno.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.d.ts"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/webStandardStreamableHttp.d.ts"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/** A running OAuth-protected MCP server. */
export interface OAuthMcpServer {
  /** The MCP endpoint. */
  readonly url: string;
  /** Every request so far, as `METHOD /path`. */
  readonly requests: readonly string[];
  /** Every token request's grant type and how it ended: `authorization_code ok`, `refresh_token refused`. */
  readonly grants: readonly string[];
  /** The access tokens issued so far (to check none is ever printed). */
  readonly issued: readonly string[];
  /** Issues a token pair as a completed login would, without one. */
  issue(): { readonly access_token: string; readonly refresh_token: string };
  /** Makes every access token issued so far unusable; refresh tokens still work. */
  expireAccessTokens(): void;
  /** Makes every token issued so far unusable, refresh tokens included. */
  revokeAll(): void;
  /** Stops listening. */
  close(): Promise<void>;
}

/** How tokens look: random hex (the default), or plain words that no redaction rule of shape would catch. */
export type TokenShape = "random" | "words";

const token = () => randomBytes(24).toString("hex");
const WORDS = ["apple", "birch", "cedar", "daisy", "elder", "fern", "grove", "hazel", "iris", "juniper"];
/** The `count`-th token of `shape` for `kind` (access or refresh): distinct up to 100 per kind. */
const tokenOf = (shape: TokenShape, kind: string, count: number) =>
  shape === "random" ? token() : `${kind}-${WORDS[count % WORDS.length]}-${WORDS[Math.floor(count / WORDS.length) % WORDS.length]}-token`;
const base64url = (bytes: Buffer) => bytes.toString("base64").replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

function body(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.once("end", () => resolve(Buffer.concat(chunks)));
    request.once("error", reject);
  });
}

function json(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(value));
}

/** Answers one MCP request with a fresh SDK server without sessions (no session id generator), as the SDK suggests for stateless serving. */
async function mcp(request: IncomingMessage, response: ServerResponse, url: string, bytes: Buffer, bearer: string): Promise<void> {
  const server = new Server({ name: "oauth-test", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: "whoami", description: "Says who is logged in.", inputSchema: { type: "object", properties: {} } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: `Logged in with ${bearer}.` }] }));
  const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
  await server.connect(transport);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value);
  const answer = await transport.handleRequest(new Request(url, { method: request.method ?? "POST", headers, ...(bytes.length > 0 ? { body: bytes.toString("utf8") } : {}) }));
  const text = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  response.end(text);
  await server.close();
}

/** Starts the server on a free loopback port; `shape` is how the tokens it issues look. */
export async function startOAuthMcpServer(shape: TokenShape = "random"): Promise<OAuthMcpServer> {
  const requests: string[] = [];
  const grants: string[] = [];
  const issued: string[] = [];
  const access = new Set<string>();
  const refresh = new Set<string>();
  const codes = new Map<string, { challenge: string; redirect: string }>();
  let origin = "";
  let count = 0;
  const issue = () => {
    const pair = { access_token: tokenOf(shape, "access", count), refresh_token: tokenOf(shape, "refresh", count++) };
    access.add(pair.access_token);
    refresh.add(pair.refresh_token);
    issued.push(pair.access_token);
    return pair;
  };
  const grant = (response: ServerResponse, kind: string) => {
    const pair = issue();
    grants.push(`${kind} ok`);
    json(response, 200, { ...pair, token_type: "Bearer", expires_in: 3600 });
  };
  const refuse = (response: ServerResponse, kind: string) => {
    grants.push(`${kind} refused`);
    json(response, 400, { error: "invalid_grant" });
  };

  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", origin);
    requests.push(`${request.method} ${url.pathname}`);
    const bytes = await body(request);
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      return json(response, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    }
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return json(response, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (url.pathname === "/register" && request.method === "POST") {
      return json(response, 201, { ...JSON.parse(bytes.toString("utf8")), client_id: `client-${token()}`, client_id_issued_at: Math.floor(Date.now() / 1000) });
    }
    if (url.pathname === "/authorize") {
      const code = token();
      const redirect = url.searchParams.get("redirect_uri") ?? "";
      codes.set(code, { challenge: url.searchParams.get("code_challenge") ?? "", redirect });
      const back = new URL(redirect);
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      response.writeHead(302, { location: back.href });
      return response.end();
    }
    if (url.pathname === "/token" && request.method === "POST") {
      const form = new URLSearchParams(bytes.toString("utf8"));
      const kind = form.get("grant_type") ?? "";
      if (kind === "authorization_code") {
        const issuedCode = codes.get(form.get("code") ?? "");
        codes.delete(form.get("code") ?? "");
        const verifier = base64url(createHash("sha256").update(form.get("code_verifier") ?? "").digest());
        const valid = issuedCode !== undefined && issuedCode.challenge === verifier && issuedCode.redirect === form.get("redirect_uri");
        return valid ? grant(response, kind) : refuse(response, kind);
      }
      if (kind === "refresh_token" && refresh.delete(form.get("refresh_token") ?? "")) return grant(response, kind);
      return refuse(response, kind);
    }
    if (url.pathname === "/mcp") {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
      if (bearer === undefined || !access.has(bearer)) {
        response.writeHead(401, { "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"` });
        return response.end();
      }
      // No server-to-client event stream: the spec lets a server answer its GET with 405.
      if (request.method === "GET") {
        response.writeHead(405, { allow: "POST, DELETE" });
        return response.end();
      }
      return await mcp(request, response, url.href, bytes, bearer);
    }
    response.writeHead(404);
    response.end();
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`;
  return {
    url: `${origin}/mcp`,
    requests,
    grants,
    issued,
    issue,
    expireAccessTokens: () => access.clear(),
    revokeAll: () => {
      access.clear();
      refresh.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
