/**
 * {@link Runtime.fetch} for Node over `node:http` and `node:https`. Node 20's
 * global `fetch` is undici, loaded on first use: about 50 ms and 19 MiB
 * before a first turn's request can leave, for features a streaming POST to
 * a provider does not need. Keep-alive comes from Node's global agents (on by
 * default since Node 19); TLS trusts Node's CA store and
 * `NODE_EXTRA_CA_CERTS`, as `fetch` does.
 *
 * @module
 */

import type * as Http from "node:http";
import type { IncomingMessage } from "node:http";
import type * as Https from "node:https";
import type * as Stream from "node:stream";
import type { HttpRequestInit, HttpResponse, Runtime } from "../src/host/runtime.ts";
// The bound Deno's fetch gets too (idle-fetch.ts), so both runtimes give up after the same silence.
import { PROVIDER_IDLE_TIMEOUT_MS as IDLE_TIMEOUT_MS } from "./idle-fetch.ts";
import { nodeBuiltin } from "./node-builtin.ts";

// Loaded on first use, so a child that never runs a turn (or only talks
// plain http to a local server) never loads TLS; synchronously, as the single
// executable's V8 code cache leaves Node 20 no loader to serve an import()
// (scripts/build-sea.mjs).
const http = () => nodeBuiltin<typeof Http>("node:http");
const https = () => nodeBuiltin<typeof Https>("node:https");
const stream = () => nodeBuiltin<typeof Stream>("node:stream");

function headerOf(message: IncomingMessage, name: string): string | null {
  const value = message.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
}

/** Options of {@link createNodeFetch}. */
export interface NodeFetchOptions {
  /** Longest silence on the connection before the request fails (default 300,000 ms; tests pass less). */
  readonly idleTimeoutMs?: number;
}

/** A {@link Runtime.fetch} over `node:http`/`node:https` with `options`; the runtime uses {@link nodeFetch}. */
export function createNodeFetch(options: NodeFetchOptions = {}): Runtime["fetch"] {
  const idleTimeoutMs = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS;
  return (url, init) => send(url, init, idleTimeoutMs);
}

/** Sends one request; resolves with the status, headers and a Web stream of the body. */
export function nodeFetch(url: string, init: HttpRequestInit): Promise<HttpResponse> {
  return send(url, init, IDLE_TIMEOUT_MS);
}

async function send(url: string, init: HttpRequestInit, idleTimeoutMs: number): Promise<HttpResponse> {
  const target = new URL(url);
  if (target.protocol !== "https:" && target.protocol !== "http:") throw new TypeError(`Unsupported URL scheme ${target.protocol}`);
  const request = target.protocol === "https:" ? https().request : http().request;
  const { Readable } = stream();
  return await new Promise((resolve, reject) => {
    const body = init.body === undefined ? null : Buffer.from(init.body, "utf8");
    const outgoing = request(target, {
      method: init.method,
      headers: body === null ? { ...init.headers } : { ...init.headers, "content-length": String(body.length) },
      signal: init.signal,
    }, (response) => {
      const status = response.statusCode ?? 0;
      if (init.redirect === "error" && status >= 300 && status < 400) {
        response.destroy();
        reject(new TypeError(`Redirected with status ${status}`));
        return;
      }
      resolve({
        status,
        ok: status >= 200 && status < 300,
        headers: { get: (name) => headerOf(response, name) },
        body: Readable.toWeb(response) as ReadableStream<Uint8Array>,
      });
    });
    // A provider that accepts the connection and then goes silent would otherwise hold the run
    // until the user cancels; undici's fetch gives up after 300 s of silence too.
    outgoing.setTimeout(idleTimeoutMs, () => outgoing.destroy(new Error(`No data from the provider for ${idleTimeoutMs} ms`)));
    outgoing.on("error", reject);
    if (body === null) outgoing.end();
    else outgoing.end(body);
  });
}
