/**
 * The production HTTP clients against loopback servers: the runtime's own
 * `fetch` (on Node `runtime/node-http.ts` over `node:http`, on Deno the
 * Deno runtime's Web `fetch`) sends the request, streams the answer, refuses
 * redirects without following them, and aborts before the headers, mid-body
 * and by cancelling the body, closing the connection each time. The Node
 * client's idle timeout is tested through `createNodeFetch`'s injectable
 * timeout (a 300 s wait would prove nothing more). No timing is asserted:
 * every wait is a hang guard.
 *
 * @module
 */

import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { createNodeFetch } from "../runtime/node-http.ts";
import type { HttpRequestInit, Runtime } from "../src/host/runtime.ts";
import { eventually, guarded } from "./support/hang-guard.ts";
import { runtimeFetch } from "./support/runtime-fetch.ts";

const isDeno = "Deno" in globalThis;

interface Seen {
  readonly path: string;
  readonly method: string;
  readonly headers: IncomingMessage["headers"];
  body: string;
  /** The client closed the connection before the server ended the response. */
  clientClosed: boolean;
  ended: boolean;
}

type Handler = (request: IncomingMessage, response: ServerResponse, seen: Seen) => void;

/** A loopback server: `handlers` by path; every request is logged. */
async function loopback(handlers: Record<string, Handler>) {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const entry: Seen = { path: request.url ?? "", method: request.method ?? "", headers: request.headers, body: "", clientClosed: false, ended: false };
    seen.push(entry);
    response.on("close", () => {
      if (!entry.ended) entry.clientClosed = true;
    });
    const parts: Buffer[] = [];
    request.on("data", (part: Buffer) => parts.push(part));
    request.on("error", () => {});
    request.on("end", () => {
      entry.body = Buffer.concat(parts).toString("utf8");
      const handler = handlers[entry.path];
      if (handler === undefined) {
        entry.ended = true;
        response.writeHead(404).end();
      } else handler(request, response, entry);
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP address");
  return {
    url: (path: string) => `http://127.0.0.1:${address.port}${path}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const init = (signal = new AbortController().signal, body = '{"hello":"wörld"}'): HttpRequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", "x-probe": "1" },
  body,
  signal,
  redirect: "error",
});

/** Headers and `first`, then holds the response open until the client goes away. */
const holdAfter = (first: string): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": "text/event-stream" });
  response.write(first);
};

const decoder = new TextDecoder();

function suite(name: string, fetch: Runtime["fetch"]): void {
  describe(`${name}: the runtime's own HTTP client against a loopback server`, () => {
    let server: Awaited<ReturnType<typeof loopback>>;
    let release: () => void = () => {};
    before(async () => {
      server = await loopback({
        "/ok": (_request, response, seen) => {
          response.writeHead(201, { "content-type": "text/plain", "x-answer": "yes" });
          response.write("first,");
          // The rest is written only once the client has read the first part: the body streams.
          release = () => {
            seen.ended = true;
            response.end("second");
          };
        },
        "/hold": holdAfter("data: one\n\n"),
        "/silent": () => {},
        "/target": (_request, response, seen) => {
          seen.ended = true;
          response.writeHead(200).end("followed");
        },
        ...Object.fromEntries([301, 302, 303, 307, 308].map((status) => [`/redirect-${status}`, (_request: IncomingMessage, response: ServerResponse, seen: Seen) => {
          seen.ended = true;
          response.writeHead(status, { location: "/target" }).end();
        }])),
      });
    });
    after(() => server.close());

    it("sends the POST with its headers and UTF-8 body, and streams the answer as it arrives", async () => {
      const response = await guarded(fetch(server.url("/ok"), init()), "the response headers");
      assert.equal(response.status, 201);
      assert.equal(response.ok, true);
      assert.equal(response.headers.get("x-answer"), "yes");
      assert.equal(response.headers.get("X-Answer"), "yes");
      assert.equal(response.headers.get("x-missing"), null);
      const seen = server.seen.at(-1)!;
      assert.deepEqual([seen.method, seen.headers["content-type"], seen.headers["x-probe"], seen.body], ["POST", "application/json", "1", '{"hello":"wörld"}']);
      assert.equal(seen.headers["content-length"], String(Buffer.byteLength('{"hello":"wörld"}')));
      const reader = response.body!.getReader();
      let text = "";
      while (!text.includes("first,")) text += decoder.decode((await guarded(reader.read(), "the first part")).value);
      assert.equal(text, "first,", "the first part arrives while the server still holds the rest");
      release();
      for (;;) {
        const { done, value } = await guarded(reader.read(), "the rest of the body");
        if (done) break;
        text += decoder.decode(value);
      }
      assert.equal(text, "first,second");
    });

    it("sends a GET without a body or content-length (a catalog refresh's model list)", async () => {
      const response = await guarded(fetch(server.url("/target"), { method: "GET", headers: { accept: "application/json" }, signal: new AbortController().signal, redirect: "error" }), "the GET");
      assert.equal(response.status, 200);
      const seen = server.seen.at(-1)!;
      assert.deepEqual([seen.method, seen.body, seen.headers["content-length"], seen.headers.accept], ["GET", "", undefined, "application/json"]);
      await response.body?.cancel();
    });

    for (const status of [301, 302, 303, 307, 308]) {
      it(`refuses a ${status} redirect without following it`, async () => {
        const before = server.seen.length;
        await assert.rejects(guarded(fetch(server.url(`/redirect-${status}`), init()), "the redirect refusal"), TypeError);
        assert.deepEqual(server.seen.slice(before).map((seen) => seen.path), [`/redirect-${status}`], "/target was never requested");
      });
    }

    it("an abort before the response headers rejects and closes the connection", async () => {
      const controller = new AbortController();
      const pending = fetch(server.url("/silent"), init(controller.signal));
      await eventually(() => server.seen.at(-1)?.path === "/silent", "the request to arrive");
      const seen = server.seen.at(-1)!;
      controller.abort();
      await assert.rejects(guarded(pending, "the aborted request"));
      await eventually(() => seen.clientClosed, "the server to see the connection close");
    });

    it("an abort mid-body fails the body read and closes the connection", async () => {
      const controller = new AbortController();
      const response = await guarded(fetch(server.url("/hold"), init(controller.signal)), "the response headers");
      const seen = server.seen.at(-1)!;
      const reader = response.body!.getReader();
      const first = await guarded(reader.read(), "the first event");
      assert.equal(decoder.decode(first.value), "data: one\n\n");
      const next = reader.read();
      controller.abort();
      await assert.rejects(guarded(next, "the aborted body read"));
      await eventually(() => seen.clientClosed, "the server to see the connection close");
    });

    it("cancelling the body closes the connection", async () => {
      const response = await guarded(fetch(server.url("/hold"), init()), "the response headers");
      const seen = server.seen.at(-1)!;
      const reader = response.body!.getReader();
      await guarded(reader.read(), "the first event");
      await guarded(reader.cancel(), "the cancel");
      await eventually(() => seen.clientClosed, "the server to see the connection close");
    });

    it("an already aborted signal never sends the request", async () => {
      const controller = new AbortController();
      controller.abort();
      const before = server.seen.length;
      await assert.rejects(guarded(fetch(server.url("/ok"), init(controller.signal)), "the refused request"));
      assert.equal(server.seen.length, before);
    });
  });
}

suite(isDeno ? "deno" : "node", runtimeFetch);

describe("node: createNodeFetch's idle timeout (runtime/node-http.ts)", { skip: isDeno ? "the Node adapter's own client; Deno runs its runtime's fetch above" : false }, () => {
  // The timeout is injected small so that the test waits for it rather than 300 s; what is proven is that a
  // silent connection fails the request, not how soon.
  const fetch = createNodeFetch({ idleTimeoutMs: 200 });
  let server: Awaited<ReturnType<typeof loopback>>;
  before(async () => {
    server = await loopback({ "/silent": () => {}, "/hold": holdAfter("data: one\n\n") });
  });
  after(() => server.close());

  it("a server that accepts the request and never answers fails it with the idle timeout", async () => {
    const error = await guarded(fetch(server.url("/silent"), init()), "the idle timeout").then(() => null, (reason: unknown) => reason);
    assert.ok(error instanceof Error);
    assert.match(error.message, /No data from the provider for 200 ms/);
    await eventually(() => server.seen.at(-1)!.clientClosed, "the server to see the connection close");
  });

  it("a stream that goes silent after its first event fails the body read with the idle timeout", async () => {
    const response = await guarded(fetch(server.url("/hold"), init()), "the response headers");
    const reader = response.body!.getReader();
    assert.equal(decoder.decode((await guarded(reader.read(), "the first event")).value), "data: one\n\n");
    // Node reports the destroyed response as "aborted"; what matters is that the read fails, and not by the hang guard.
    const error = await guarded(reader.read(), "the idle timeout").then(() => null, (reason: unknown) => reason);
    assert.ok(error instanceof Error, "the body read failed");
    assert.doesNotMatch(error.message, /hang guard/);
    await eventually(() => server.seen.at(-1)!.clientClosed, "the server to see the connection close");
  });

  it("refuses a URL scheme other than http and https", async () => {
    await assert.rejects(fetch("file:///etc/passwd", init()), TypeError);
  });
});
