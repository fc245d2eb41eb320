/**
 * The HTTP client of the runtime the tests run on, so in-process turns reach
 * loopback providers through production code rather than a test client: on
 * Node `runtime/node-http.ts` (what `createNodeRuntime` uses), on Deno the
 * Deno runtime's own `fetch`, loaded through a computed specifier as in
 * `tools.ts` so that tsc (which builds the Node side) never sees it.
 *
 * @module
 */

import { nodeFetch } from "../../runtime/node-http.ts";
import type { Runtime } from "../../src/host/runtime.ts";

const denoAdapter = "../../runtime/deno-runtime.ts";

/** `Runtime.fetch` of this test process's real runtime. */
export const runtimeFetch: Runtime["fetch"] = "Deno" in globalThis
  ? (await import(denoAdapter) as { createDenoRuntime(): Runtime }).createDenoRuntime().fetch
  : nodeFetch;
