/**
 * {@link Runtime.listenLoopback} for Node: `node:http` on 127.0.0.1, loaded
 * on first use (only `magi-code mcp login` listens).
 *
 * @module
 */

import type * as Http from "node:http";
import type { LoopbackHandler, LoopbackListener } from "../src/host/runtime.ts";
import { nodeBuiltin } from "./node-builtin.ts";

/** Listens on 127.0.0.1:0 and answers each request with `handler`. */
export async function nodeListenLoopback(handler: LoopbackHandler): Promise<LoopbackListener> {
  // As runtime/node-http.ts: synchronously, never an import().
  const http = nodeBuiltin<typeof Http>("node:http");
  const server = http.createServer((request, response) => {
    const reply = handler(request.method ?? "GET", request.url ?? "/");
    response.writeHead(reply.status, { "content-type": "text/plain; charset=utf-8", connection: "close" });
    response.end(reply.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  let closing: Promise<void> | null = null;
  return {
    port,
    close: () =>
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
