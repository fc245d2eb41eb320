/**
 * The one door to the MCP SDK: every module of `src/mcp/` takes the SDK's
 * client parts from here. Node (tsc, esbuild) resolves the SDK's subpaths
 * through its `exports` map; Deno resolves them at run time the same way
 * but finds no types for the `./*.js` pattern, so each import names its
 * declaration file for Deno (`@ts-types`, a comment to everyone else).
 *
 * @module
 */

export { Client } from "@modelcontextprotocol/sdk/client";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.d.ts"
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/transport.d.ts"
export type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/types.d.ts"
export {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode as RpcErrorCode,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  McpError,
  ResultSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/client/auth.d.ts"
export { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
// @ts-types="../../node_modules/@modelcontextprotocol/sdk/dist/esm/shared/auth.d.ts"
export type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
