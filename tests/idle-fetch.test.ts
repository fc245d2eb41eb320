/**
 * The provider idle timeout on a Web `fetch` (`runtime/idle-fetch.ts`),
 * which Deno's runtime uses, against a loopback server that goes silent: no
 * headers, or no body bytes since the last. A manual clock moves time, so
 * nothing here waits 300 s or claims a speed. Node's adapter has the same
 * bound as its socket timeout (`node-http.ts` imports the constant).
 */

import assert from "node:assert/strict";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { ManualClock } from "../runtime/memory.ts";
import { PROVIDER_IDLE_TIMEOUT_MS, withIdleTimeout } from "../runtime/idle-fetch.ts";
import type { HttpRequestInit, Runtime } from "../src/host/runtime.ts";

const IDLE = PROVIDER_IDLE_TIMEOUT_MS;
const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";

/** Responses the test writes to by hand: `silent` never answers; `stream` sends headers and waits. */
const open = new Map<string, ServerResponse>();
const sockets = new Set<Socket>();
const server = createServer((request, response) => {
  if (request.url === "/stream") {
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.flushHeaders();
  }
  open.set(request.url ?? "", response);
});
server.on("connection", (socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});
let base = "";
before(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const init = (signal = new AbortController().signal): HttpRequestInit => ({ method: "POST", headers: {}, body: "{}", signal, redirect: "error" });

/** Resolves a promise's state after letting real I/O run: "pending" if it has not settled. */
async function state(promise: Promise<unknown>): Promise<"pending" | "resolved" | "rejected"> {
  let result: "pending" | "resolved" | "rejected" = "pending";
  promise.then(() => (result = "resolved"), () => (result = "rejected"));
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  return result;
}

/** Waits (hang-guarded) until the server holds the response for `path`. */
async function served(path: string): Promise<ServerResponse> {
  for (let i = 0; i < 20_000 && !open.has(path); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  const response = open.get(path);
  assert.ok(response, `the server got ${path}`);
  open.delete(path);
  return response;
}

describe("provider idle timeout", () => {
  it("is 300 s, Node's bound", () => assert.equal(IDLE, 300_000));

  it("a server that never answers fails the request after 300 s of silence, not before", async () => {
    const clock = new ManualClock();
    const fetch = withIdleTimeout((url, options) => globalThis.fetch(url, options), clock);
    const pending = fetch(`${base}/silent`, init());
    await served("/silent");
    clock.advance(IDLE - 1);
    assert.equal(await state(pending), "pending");
    clock.advance(1);
    assert.equal(await state(pending), "rejected");
  });

  it("mid-stream silence fails the body read after 300 s; every chunk restarts the bound", async () => {
    const clock = new ManualClock();
    const fetch = withIdleTimeout((url, options) => globalThis.fetch(url, options), clock);
    const responding = fetch(`${base}/stream`, init());
    const response = await served("/stream");
    const reader = (await responding).body!.getReader();
    clock.advance(IDLE - 1_000);
    response.write("data: 1\n\n");
    assert.equal(new TextDecoder().decode((await reader.read()).value), "data: 1\n\n");
    clock.advance(IDLE - 1);
    const next = reader.read();
    assert.equal(await state(next), "pending", "299,999 ms since the last chunk");
    clock.advance(1);
    assert.equal(await state(next), "rejected");
    response.destroy();
  });

  it("a stream that ends or is cancelled leaves no timer behind", async () => {
    const clock = new ManualClock();
    let live = 0;
    const counting = {
      monotonicNow: () => clock.monotonicNow(),
      setTimer(ms: number, callback: () => void) {
        live++;
        const timer = clock.setTimer(ms, () => (live--, callback()));
        return { dispose: () => (live--, timer.dispose()) };
      },
    };
    const fetch = withIdleTimeout((url, options) => globalThis.fetch(url, options), counting);
    const responding = fetch(`${base}/stream`, init());
    const response = await served("/stream");
    const body = (await responding).body!;
    response.end("data: done\n\n");
    for await (const _ of body) { /* drain */ }
    assert.equal(live, 0);
    const cancelled = fetch(`${base}/stream`, init());
    const second = await served("/stream");
    await (await cancelled).body!.cancel();
    assert.equal(live, 0);
    second.destroy();
  });

  it("Deno's runtime fetch carries the same 300 s bound", { skip: !isDeno }, async () => {
    const { createDenoRuntime } = await import(denoAdapter) as { createDenoRuntime(): Runtime };
    const armed: number[] = [];
    const original = globalThis.setTimeout;
    globalThis.setTimeout = ((callback: () => void, ms?: number) => (armed.push(ms ?? 0), original(callback, ms))) as typeof setTimeout;
    try {
      const responding = createDenoRuntime().fetch(`${base}/stream`, init());
      const response = await served("/stream");
      await (await responding).body!.cancel();
      response.destroy();
    } finally {
      globalThis.setTimeout = original;
    }
    assert.ok(armed.includes(IDLE), `a ${IDLE} ms timer was armed (saw ${armed.join(", ")})`);
  });
});
