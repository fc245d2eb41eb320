/**
 * The bounds the MCP connection layer keeps (docs/features/mcp.md, "Limits").
 * What a server sends is bounded before it is kept: its messages, its tool
 * list, each tool's schema and description, and what a call's result gives
 * the model.
 *
 * @module
 */

/** Largest JSON-RPC message (a stdio line, an HTTP body or one server-sent event), in bytes. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Most tools one server may offer. */
export const MAX_TOOLS_PER_SERVER = 128;
/** Most `tools/list` pages read from one server. */
export const MAX_LIST_PAGES = 32;
/** Largest input schema of one tool, as compact JSON in UTF-8 bytes. */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;
/** Largest input schema of one tool, in JSON nesting levels. */
export const MAX_INPUT_SCHEMA_DEPTH = 32;
/** Largest sum of one server's input schemas, in bytes. */
export const MAX_SERVER_SCHEMA_BYTES = 256 * 1024;
/** A tool description longer than this, in UTF-8 bytes, is cut here. */
export const MAX_DESCRIPTION_BYTES = 4096;
/** Largest `structuredContent` shown to the model whole, as compact JSON in UTF-8 bytes. */
export const MAX_STRUCTURED_BYTES = 16 * 1024;
/** How long an HTTP server gets to end its session (`DELETE`) when the child closes. */
export const SESSION_DELETE_GRACE_MS = 1000;
