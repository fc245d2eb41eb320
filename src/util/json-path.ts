/**
 * JSON paths for messages about a configuration file: where a person should
 * look, in the `$.a.b["c d"][0]` form editors and `jq` users read.
 *
 * @module
 */

/** A JSON path from property names and array indices; `$` for none. */
export function jsonPath(segments: readonly (string | number)[]): string {
  return `$${segments.map((segment) => typeof segment === "number" ? `[${segment}]` : /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`).join("")}`;
}
