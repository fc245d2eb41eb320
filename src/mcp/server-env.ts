/**
 * The environment a stdio MCP server starts with: a short allowlist of the
 * child's own variables that programs need to run at all (where home is,
 * where commands are, the locale, the temporary directory), then exactly
 * the variables its definition names, which win. Nothing else is inherited:
 * provider keys and every other credential in the child's environment stay
 * out of servers unless the user passes one by name.
 *
 * @module
 */

/** The variables a server inherits from the child, when set there. */
export const INHERITED_VARIABLES: readonly string[] = Object.freeze([
  "HOME",
  "LOGNAME",
  "USER",
  "PATH",
  "SHELL",
  "TERM",
  "TMPDIR",
  "TZ",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
]);

/** The environment for a server defined with `env`, given the child's `inherited` environment. */
export function serverEnvironment(inherited: Readonly<Record<string, string>>, env: Readonly<Record<string, string>>): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = inherited[name];
    if (value !== undefined && Object.hasOwn(inherited, name)) result[name] = value;
  }
  for (const [name, value] of Object.entries(env)) result[name] = value;
  return result;
}
