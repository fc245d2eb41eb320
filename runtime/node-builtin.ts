/**
 * Synchronous access to a Node built-in module on first use, so start-up
 * does not evaluate one it does not need: `node:child_process` (with
 * `net`, `dgram` and the process wrappers) and `node:crypto` (with its
 * twenty internal modules) cost a child ~1 and ~2 ms of CPU before its
 * `initialize` answer, and serving a window that never runs a tool or
 * hashes a session needs neither (bench/README.md, start-up figures).
 *
 * `process.getBuiltinModule` (Node 20.16 and later, and the single
 * binary's Node 22) returns the module without a resolution; older Node 20
 * releases get it from a `require` made for this file.
 *
 * @module
 */

import { createRequire } from "node:module";

let fallback: ((id: string) => unknown) | undefined;

/** The built-in module `id` (a `node:` specifier), evaluated now if nothing has loaded it yet. */
export function nodeBuiltin<T>(id: `node:${string}`): T {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (get !== undefined) return get(id) as T;
  fallback ??= createRequire(import.meta.url);
  return fallback(id) as T;
}
