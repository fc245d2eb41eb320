/**
 * The command line: `magi-code serve --stdio`, `config check`, `mcp list | approve | revoke | login | logout`, `hooks list | approve | revoke`,
 * `schema`, `--help` and `--version`.
 * Anything else is an invalid launch: exit 2 with one line on stderr, nothing
 * on stdout, and no filesystem or other runtime side effect.
 *
 * @module
 */

import type { Runtime, StdioKind } from "./host/runtime.ts";
import { createServer } from "./server.ts";
import { settlesWithin } from "./util/async.ts";
import { VERSION } from "./util/version.ts";

/** The `--help` text. */
export const HELP = `magi-code ${VERSION}: a coding-agent backend for GUI clients.

Usage:
  magi-code serve --stdio   Serve magi-code.local-agent version 1 on stdin/stdout.
  magi-code config check    Print every settings problem (file, JSON path, what is
                            wrong); exit 1 if there is any.
  magi-code mcp list        Print each MCP server in the settings: its file, whether
                            it is enabled, approved, or changed since approval.
  magi-code mcp approve <name> [--yes]
                            Print the server's definition and approve it (asks
                            on a terminal; --yes approves without asking).
  magi-code mcp revoke <name>
                            Withdraw the server's approval.
  magi-code mcp login <name>
                            Log in to an approved HTTP server with OAuth (prints
                            the URL to open; stores the tokens in MC_HOME).
  magi-code mcp logout <name>
                            Remove the server's stored OAuth tokens.
  magi-code hooks list      Print each hook in the settings with its id: whether it
                            is global, or a project hook approved or not.
  magi-code hooks approve <id> [--yes] | --all [--yes]
                            Print a project hook's definition and approve it
                            (--all: every project hook not yet approved).
  magi-code hooks revoke <id>
                            Withdraw a project hook's approval.
  magi-code schema          Print the wire's JSON Schemas (params, results, events,
                            envelopes), keyed by their file under docs/schema/.
  magi-code --help          Print this help.
  magi-code --version       Print the version.

stdin and stdout must be pipes (FIFOs or the socketpairs a parent process
creates for child stdio). MC_HOME selects the storage root (default
~/.magi-code). See docs/protocol.md for the wire contract and
docs/settings.md for settings and providers, docs/features/mcp.md for MCP
servers, docs/features/runner.md for hooks (run the mcp and hooks commands in
the workspace, with the client's MC_HOME).
`;

/** Stdio kinds the transport serves: FIFOs and unnamed socketpairs. */
export const SERVED_STDIO: ReadonlySet<StdioKind> = new Set(["fifo", "socketpair"]);

const encoder = new TextEncoder();

/** How long an invalid launch waits for its stderr line before exiting anyway. */
const STDERR_WAIT_MS = 100;

async function fail(runtime: Runtime, line: string): Promise<number> {
  // A parent that never drains a full stderr pipe must not keep an invalid launch alive.
  const written = runtime.stderr.write(encoder.encode(`magi-code: ${line}\n`));
  await settlesWithin(written, STDERR_WAIT_MS, (ms, callback) => runtime.setTimer(ms, callback));
  return 2;
}

/**
 * `magi-code schema`: the JSON Schemas generated from the wire's valibot
 * schemas, exactly what `docs/schema/` holds. Loaded on demand, so serving
 * never parses the converter.
 */
async function schemaCommand(runtime: Runtime): Promise<number> {
  const { wireSchemas } = await import("./protocol/json-schema.ts");
  try {
    await runtime.stdout.write(encoder.encode(`${JSON.stringify(wireSchemas(), null, 2)}\n`));
    return 0;
  } catch {
    return 1;
  }
}

/** Runs the command line in `runtime.args`; resolves with the exit code. */
export async function main(runtime: Runtime): Promise<number> {
  const args = runtime.args;
  if (args.length === 1 && (args[0] === "--help" || args[0] === "--version")) {
    const text = args[0] === "--help" ? HELP : `magi-code ${VERSION}\n`;
    try {
      await runtime.stdout.write(encoder.encode(text));
      return 0;
    } catch {
      return 1;
    }
  }
  if (args[0] === "schema") {
    if (args.length === 1) return await schemaCommand(runtime);
    return await fail(runtime, "'schema' takes no arguments");
  }
  if (args[0] === "config") {
    // Loaded on demand, like the schema converter: serving never parses the settings reporter.
    if (args.length === 2 && args[1] === "check") return await (await import("./admission/config-check-command.ts")).configCheckCommand(runtime);
    return await fail(runtime, "'config' takes one subcommand, check");
  }
  if (args[0] === "mcp") {
    // Loaded on demand: serving never parses the approval commands.
    const command = await import("./admission/mcp-command.ts");
    const verb = command.parseMcpArgs(args.slice(1));
    return verb === null ? await fail(runtime, command.MCP_USAGE) : await command.mcpCommand(runtime, verb);
  }
  if (args[0] === "hooks") {
    // Loaded on demand, like the mcp commands.
    const command = await import("./admission/hooks-command.ts");
    const verb = command.parseHooksArgs(args.slice(1));
    return verb === null ? await fail(runtime, command.HOOKS_USAGE) : await command.hooksCommand(runtime, verb);
  }
  if (args[0] === "sandbox-host" && args.length === 1) {
    // Hidden: the Code Mode sandbox host this program starts as its own child (src/sandbox/program.ts).
    return await (await import("./sandbox/host.ts")).sandboxHost(runtime);
  }
  if (args[0] !== "serve") {
    return await fail(runtime, args.length === 0 ? "missing command; try 'magi-code --help'" : "unknown command; try 'magi-code --help'");
  }
  if (args.length !== 2 || args[1] !== "--stdio") {
    return await fail(runtime, "'serve' takes exactly one flag, --stdio");
  }
  // stdin first, and stdout only when stdin is served: a refused launch looks no further (on Deno a
  // look can be a /bin/sh child, runtime/deno-stdio.ts).
  if (!SERVED_STDIO.has(await runtime.stdioKind(0)) || !SERVED_STDIO.has(await runtime.stdioKind(1))) {
    return await fail(runtime, "stdin and stdout must be pipes (a FIFO or a socketpair), not a terminal, file or device");
  }
  return await createServer(runtime).serve();
}
