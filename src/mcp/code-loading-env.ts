/**
 * Environment variables that make a program load or run code its command
 * line does not name: the dynamic loader's preload and search paths, and
 * the option and module-path variables of the interpreters MCP servers are
 * usually written for. A stdio server's `env` setting one is not wrong (a
 * wrapper may need `LD_LIBRARY_PATH`), but an approval shows the variables'
 * names and never their values, so `magi-code mcp approve` warns about
 * these names on stderr before approving; it does not refuse. The list and
 * why `PATH` is not on it: docs/features/mcp.md, "Approval".
 *
 * @module
 */

/** The variables warned about, by exact name (compared case-insensitively). */
export const CODE_LOADING_VARIABLES: readonly string[] = Object.freeze([
  // glibc's dynamic loader: libraries loaded into every dynamically linked program.
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  // Node: `--require` / `--import` in NODE_OPTIONS run a module first; NODE_PATH adds module roots.
  "NODE_OPTIONS",
  "NODE_PATH",
  // Python, Perl, Ruby and the JVM: module search paths and options that load code at start.
  "PYTHONPATH",
  "PYTHONHOME",
  "PERL5LIB",
  "PERL5OPT",
  "RUBYLIB",
  "RUBYOPT",
  "JAVA_TOOL_OPTIONS",
  "JDK_JAVA_OPTIONS",
  "_JAVA_OPTIONS",
  // A file non-interactive bash sources first: servers started through a bash script.
  "BASH_ENV",
]);

/** Prefixes warned about: macOS's dynamic loader (`DYLD_INSERT_LIBRARIES`, `DYLD_LIBRARY_PATH`, …). */
export const CODE_LOADING_PREFIXES: readonly string[] = Object.freeze(["DYLD_"]);

const EXACT = new Set(CODE_LOADING_VARIABLES);

/**
 * The names in `env` that are on the list, in code-unit order. Compared
 * case-insensitively: Windows reads environment names that way, and a
 * warning too many costs less than one too few.
 */
export function codeLoadingNames(env: Readonly<Record<string, string>>): string[] {
  return Object.keys(env)
    .filter((name) => {
      const upper = name.toUpperCase();
      return EXACT.has(upper) || CODE_LOADING_PREFIXES.some((prefix) => upper.startsWith(prefix));
    })
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
