/**
 * The Deno permissions `magi-code serve --stdio` needs, checked before
 * serving so that a client spawning us with too narrow a set is told which
 * flag is missing instead of failing half way through a turn (or, as before,
 * with a misleading "must be pipes").
 *
 * Why these five: `read`/`write` for the storage root, the workspace and the
 * file tools; `env` for `MC_HOME`, `HOME`, provider keys and the shell tool's
 * environment; `net` for provider requests; `run` for the shell tool and for
 * `Deno.kill(pid, 0)`, which tells a dead lease holder from a live one.
 * `--allow-sys=hostname` is optional: without it leases fall back to heartbeat
 * age alone. The spawn line in README.md is built from {@link SERVE_FLAGS}.
 *
 * @module
 */

/** A permission `serve --stdio` cannot work without, as `Deno.permissions` names it. */
export type ServePermission = "read" | "write" | "env" | "net" | "run";

/** The required permissions, in the order the spawn line lists them. */
export const REQUIRED_PERMISSIONS: readonly ServePermission[] = Object.freeze(["read", "write", "env", "net", "run"]);

/** The narrow flag set documented for spawning the Deno entry (and baked into compiled binaries). */
export const SERVE_FLAGS: readonly string[] = Object.freeze([
  ...REQUIRED_PERMISSIONS.map((name) => `--allow-${name}`),
  "--allow-sys=hostname",
]);

/**
 * The first required permission that `query` (Deno's
 * `permissions.querySync(…).state`; this file stays free of `Deno` so Node
 * tests can import it) does not answer "granted" for every path, host or
 * variable, or `null` when all are. `Deno.permissions.querySync` itself needs
 * no permission, and it never prompts: a scoped grant such as
 * `--allow-read=/tmp` answers "prompt" for the unscoped query and counts as
 * missing, because the workspace and storage root are only known later.
 */
export function missingPermission(query: (name: ServePermission) => string): ServePermission | null {
  return REQUIRED_PERMISSIONS.find((name) => query(name) !== "granted") ?? null;
}

/** The one stderr line for a missing permission; it names the flag and the full narrow set. */
export function missingPermissionLine(name: ServePermission): string {
  return `magi-code: the Deno permission --allow-${name} is missing; run the Deno entry with ${SERVE_FLAGS.join(" ")}\n`;
}
