#!/usr/bin/env node
/**
 * The Node.js entry point: turns on Node's compile cache, then starts
 * `node-main.ts`, which builds the Node runtime and runs the command line
 * with it. scripts/bundle.mjs builds it twice: the npm `bin`,
 * `dist/magi-code.cjs`, where the import() below becomes a require() of the
 * start-up chunk, so Node 20 answers `initialize` without loading its
 * ES-module loader; and `dist/magi-code.mjs`, the same as an ES module.
 *
 * Where Node offers it (22.1 and later), the module compile cache is turned
 * on before anything else loads, so the command line and the server (the
 * bundle's start-up chunk behind `node-main.ts`) are read from V8 code that
 * Node keeps on disk (`NODE_COMPILE_CACHE`, by default a `node-compile-cache`
 * directory in the system temp directory) instead of being compiled at every
 * start; Node 20 has no such cache and starts as before (bench/README.md).
 *
 * @module
 */

import module from "node:module";

// @types/node 20 does not know it; on Node 20 it is undefined.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// Not a top-level await, which a CommonJS build cannot hold; a failure still ends the process (exit 1).
void import("./node-main.ts").then((main) => main.start());
