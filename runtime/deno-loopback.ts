/**
 * {@link Runtime.listenLoopback} for Deno: `Deno.serve` on 127.0.0.1 (only
 * `magi-code mcp login` listens).
 *
 * @module
 */

import type { LoopbackHandler, LoopbackListener } from "../src/host/runtime.ts";

/** Listens on 127.0.0.1:0 and answers each request with `handler`. */
export function denoListenLoopback(handler: LoopbackHandler): Promise<LoopbackListener> {
  return new Promise((resolve, reject) => {
    try {
      const server = Deno.serve({
        hostname: "127.0.0.1",
        port: 0,
        onListen: ({ port }) => {
          let closing: Promise<void> | null = null;
          resolve({ port, close: () => closing ??= server.shutdown() });
        },
      }, (request) => {
        const url = new URL(request.url);
        const reply = handler(request.method, `${url.pathname}${url.search}`);
        return new Response(reply.body, { status: reply.status, headers: { "content-type": "text/plain; charset=utf-8", connection: "close" } });
      });
    } catch (error) {
      reject(error);
    }
  });
}
