#!/usr/bin/env node
/**
 * The Node.js entry point (the npm `bin`): turns on Node's compile cache,
 * then starts `node-main.ts`, which builds the Node runtime and runs the
 * command line with it.
 *
 * Where Node offers it (22.1 and later), the module compile cache is turned
 * on before anything else loads, so the command line and the server (the
 * bundle's chunk behind `node-main.ts`) are read from V8 code that
 * Node keeps on disk (`NODE_COMPILE_CACHE`, by default a `node-compile-cache`
 * directory in the system temp directory) instead of being compiled at every
 * start; Node 20 has no such cache and starts as before (bench/README.md).
 *
 * @module
 */

import module from "node:module";

// @types/node 20 does not know it; on Node 20 it is undefined.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import("./node-main.ts");
