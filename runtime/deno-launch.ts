/**
 * What the spawn line of the Deno entry adds to its permissions
 * (`permissions.ts`) so that `deno run runtime/deno.ts serve --stdio` starts
 * cheaper. Neither is required: the child behaves the same without them.
 * README.md ("On Deno, a client spawns the Deno entry") and bench/README.md
 * give the figures. This file stays free of `Deno` so Node tests can import it.
 *
 * @module
 */

/**
 * `--unstable-lazy-dynamic-imports`: Deno's module graph otherwise reads
 * every file a statically written `import("…")` names, transitively, before
 * the entry runs (about 250 of our files where 68 are compiled before the
 * `initialize` answer); with it, a lazy module is read when its `import()`
 * runs. Only for `deno run`: `deno compile` builds the same kind of graph and
 * would leave every lazily imported module out of the binary, so the
 * `compile` tasks in deno.json never pass it. Unstable in Deno 2; if a later
 * Deno drops it, remove it here (nothing depends on it).
 */
export const DENO_LAUNCH_FLAGS: readonly string[] = Object.freeze(["--unstable-lazy-dynamic-imports"]);

/**
 * `DENO_NO_UPDATE_CHECK=1`: `deno run` otherwise asks dl.deno.land for a newer
 * Deno 500 ms after start, once a day, and on every start where that request
 * fails (offline, firewalled): a network request the agent did not make, and
 * an HTTP client held in the child's memory.
 */
export const DENO_LAUNCH_ENV: Readonly<Record<string, string>> = Object.freeze({ DENO_NO_UPDATE_CHECK: "1" });
