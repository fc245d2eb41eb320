/**
 * Resolving a configured MCP server to the definition that is approved and
 * started: the working directory and the program become absolute paths,
 * header values and the bearer token are read.
 *
 * - `cwd`: absolute, or relative to the workspace (the child's canonical
 *   cwd); unset means the workspace. It is resolved with `realpath` and must
 *   be a directory. There is no `~` expansion.
 * - `command`: with a `/` it is a path, relative ones taken from the
 *   server's working directory, as a shell started there would; without one
 *   it is looked up on the `PATH` of the environment magi-code runs in,
 *   skipping relative entries (`.` would let the workspace supply the
 *   program). Either way it must be a regular file with an execute bit. The
 *   path found is kept, not its symlink target, so upgrading a program in
 *   place does not void its approval; moving it, or a `PATH` that finds
 *   another one, does.
 *
 * A client launched from a desktop often has a shorter `PATH` than a
 * terminal: approve from a terminal with the same environment the client
 * gives the child, or write the command as an absolute path.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { isAbsolute, joinPath, normalizePath } from "../util/paths.ts";
import type { ConfiguredMcpServer } from "../config/mcp-merge.ts";
import { type CanonicalDefinition, canonicalHttp, canonicalStdio } from "./canonical.ts";
import type { McpServerDefinition } from "./definition.ts";

/** Why a server could not be resolved; such a server is never started. */
export type ResolveFailure = "cwd_not_found" | "command_not_found";

/** The outcome of {@link resolveServer}. */
export type ResolvedServer =
  | { readonly ok: true; readonly definition: McpServerDefinition; readonly canonical: CanonicalDefinition }
  | { readonly ok: false; readonly reason: ResolveFailure };

async function directory(runtime: Runtime, path: string): Promise<string | null> {
  try {
    const real = await runtime.fs.realpath(path);
    return (await runtime.fs.stat(real)).kind === "directory" ? real : null;
  } catch {
    return null;
  }
}

async function executable(runtime: Runtime, path: string): Promise<boolean> {
  try {
    const info = await runtime.fs.stat(path);
    return info.kind === "file" && (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The absolute path `command` runs, from `cwd` and the child's `PATH`; null when there is none. */
export async function resolveCommand(runtime: Runtime, command: string, cwd: string): Promise<string | null> {
  if (command.includes("/")) {
    const path = isAbsolute(command) ? normalizePath(command) : joinPath(cwd, command);
    return await executable(runtime, path) ? path : null;
  }
  for (const entry of (runtime.env("PATH") ?? "").split(":")) {
    if (!isAbsolute(entry)) continue;
    const path = joinPath(entry, command);
    if (await executable(runtime, path)) return path;
  }
  return null;
}

/** Resolves `server` in the workspace `workspace` (canonical, absolute). */
export async function resolveServer(runtime: Runtime, server: ConfiguredMcpServer, workspace: string): Promise<ResolvedServer> {
  const common = {
    name: server.name,
    startupTimeoutMs: server.startupTimeoutMs,
    toolTimeoutMs: server.toolTimeoutMs,
    toolPolicies: server.toolPolicies,
  };
  const transport = server.transport;
  if (transport.transport === "http") {
    const token = transport.bearerTokenEnv === null ? undefined : runtime.env(transport.bearerTokenEnv);
    const definition: McpServerDefinition = {
      transport: "http",
      ...common,
      url: transport.url,
      headers: transport.headers,
      bearerToken: token === undefined || token.trim() === "" ? null : token,
    };
    return { ok: true, definition, canonical: await canonicalHttp(transport) };
  }
  const wanted = transport.cwd === null ? workspace : isAbsolute(transport.cwd) ? transport.cwd : joinPath(workspace, transport.cwd);
  const cwd = await directory(runtime, wanted);
  if (cwd === null) return { ok: false, reason: "cwd_not_found" };
  const command = await resolveCommand(runtime, transport.command, cwd);
  if (command === null) return { ok: false, reason: "command_not_found" };
  const resolved = { command, args: transport.args, env: transport.env, cwd };
  return { ok: true, definition: { transport: "stdio", ...common, ...resolved }, canonical: await canonicalStdio(resolved) };
}
