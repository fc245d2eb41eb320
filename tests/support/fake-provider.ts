/**
 * Loopback fake provider server for tests: speaks each API's SSE wire format
 * on 127.0.0.1, scripted per request. Uses `node:http`, which Node and Deno 2
 * both provide, so the same tests run on both.
 *
 * A test queues one script per expected request ({@link FakeProvider.enqueue})
 * or sets a handler. A script is a plain response (`body`, e.g. a forced
 * 401/429/500 from {@link errorScript}) or an SSE stream (`chunks`), where a
 * {@link Gate} holds the stream until the test releases it, and `end` picks a
 * clean end, a connection reset (`destroy`) or a stream left open (`hang`).
 * Every request is logged with its parsed body, how many chunks were written,
 * and whether the client went away before the end (`clientClosed`), so tests
 * can assert that cancellation really closed the HTTP stream.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { eventually, HANG_GUARD_MS } from "./hang-guard.ts";

/** Holds an SSE stream at a point until {@link Gate.release}. */
export class Gate {
  #reached = false;
  #onReached: (() => void)[] = [];
  #release!: () => void;
  /** Resolves on release. */
  readonly released: Promise<void> = new Promise((resolve) => (this.#release = resolve));

  /** Lets the stream continue past this gate. */
  release(): void {
    this.#release();
  }

  /** Resolves once the server has written everything before this gate. */
  whenReached(): Promise<void> {
    return this.#reached ? Promise.resolve() : new Promise((resolve) => this.#onReached.push(resolve));
  }

  /** Called by the server when it arrives at the gate. */
  markReached(): void {
    this.#reached = true;
    for (const resolve of this.#onReached.splice(0)) resolve();
  }
}

/** One scripted response. */
export type Script =
  | { readonly status?: number; readonly headers?: Record<string, string>; readonly body: unknown }
  | {
    readonly status?: number;
    readonly headers?: Record<string, string>;
    readonly chunks: readonly (string | Uint8Array | Gate)[];
    /** `close` (default) ends cleanly; `destroy` resets the connection; `hang` never ends. */
    readonly end?: "close" | "destroy" | "hang";
  };

/** What the server saw of one request and how its response went. */
export interface LoggedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Parsed JSON body, or `null` when absent or not JSON. */
  readonly body: unknown;
  /** SSE chunks written so far. */
  written: number;
  /** True once the server ended the response itself. */
  finished: boolean;
  /** True when the client closed the connection before the server ended the response. */
  clientClosed: boolean;
}

/** A running fake provider. */
export interface FakeProvider {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly log: LoggedRequest[];
  /** When set, decides each response instead of the queue. */
  handler: ((request: LoggedRequest) => Script) | null;
  /** Queues the script for the next request. */
  enqueue(script: Script): void;
  /** Resolves once `predicate` holds, polling; a hang guard rejects after `ms` (default {@link HANG_GUARD_MS}), never a speed claim. */
  until(predicate: () => boolean, ms?: number): Promise<void>;
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const parts: Uint8Array[] = [];
  for await (const part of request) parts.push(part as Uint8Array);
  const text = new TextDecoder().decode(Buffer.concat(parts));
  try {
    return text === "" ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

function write(response: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    if (response.write(chunk)) resolve();
    else response.once("drain", () => resolve());
  });
}

/** Starts a fake provider on 127.0.0.1 with an OS-chosen port. */
export async function startFakeProvider(): Promise<FakeProvider> {
  const queue: Script[] = [];
  const sockets = new Set<Socket>();
  const log: LoggedRequest[] = [];
  const server = createServer(async (request, response) => {
    // A client that aborts mid-upload (a cancel racing the request) leaves no body to log.
    const body = await readBody(request).catch(() => null);
    const entry: LoggedRequest = {
      method: request.method ?? "",
      url: request.url ?? "",
      headers: { ...request.headers },
      body,
      written: 0,
      finished: false,
      clientClosed: false,
    };
    log.push(entry);
    response.on("close", () => {
      if (!entry.finished) entry.clientClosed = true;
    });
    const script = fake.handler ? fake.handler(entry) : queue.shift();
    if (script === undefined) {
      response.writeHead(599, { "content-type": "text/plain" }).end("no script");
      return;
    }
    if (!("chunks" in script)) {
      response.writeHead(script.status ?? 200, { "content-type": "application/json", ...script.headers });
      entry.finished = true;
      response.end(typeof script.body === "string" ? script.body : JSON.stringify(script.body));
      return;
    }
    response.writeHead(script.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...script.headers });
    response.flushHeaders();
    for (const chunk of script.chunks) {
      if (entry.clientClosed) return;
      if (chunk instanceof Gate) {
        chunk.markReached();
        await chunk.released;
        continue;
      }
      await write(response, chunk);
      entry.written++;
    }
    if (entry.clientClosed || script.end === "hang") return;
    if (script.end === "destroy") {
      request.socket.destroy();
      return;
    }
    entry.finished = true;
    response.end();
  });
  // Never close an idle keep-alive connection from this side (Node's default is after 5 s): a client
  // that reuses one just as the server closes it sees a reset, which a busy machine made a failed turn.
  server.keepAliveTimeout = 0;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fake provider has no TCP address");
  const fake: FakeProvider = {
    url: `http://127.0.0.1:${address.port}`,
    log,
    handler: null,
    enqueue: (script) => void queue.push(script),
    until: (predicate, ms = HANG_GUARD_MS) => eventually(predicate, "a fake provider condition", { ms }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

/** Runs `body` with a fake provider of its own (no script left over from another test can reach it), then closes it. */
export async function withFakeProvider<T>(body: (provider: FakeProvider) => Promise<T>): Promise<T> {
  const provider = await startFakeProvider();
  try {
    return await body(provider);
  } finally {
    await provider.close();
  }
}
