/**
 * The contract every built-in tool meets, and the bounds its results keep.
 *
 * A tool is data plus one function, {@link Tool.prepare}: it resolves the
 * call first (canonical paths checked, the file to edit read, the bytes to
 * write counted) and hands back a {@link PreparedCall} whose `action` says
 * what exactly will happen, built from that resolved call rather than from
 * the raw arguments, so the approval prompt names the file that will change
 * and not the path the model spelled. `run()` then acts on exactly the
 * prepared target and fails if it changed in between. Bad input, refused
 * paths, missing files and failed commands all come back as a
 * {@link ToolResult} with `ok: false`; a tool never throws for anything the
 * model sent. Call tools through `prepareCall()` (`invoke.ts`), which
 * validates the raw arguments first and re-applies the output bounds and
 * redaction as a safety net.
 *
 * @module
 */

import type * as v from "valibot";
import { LIMITS } from "../../protocol/limits.ts";
import type { Runtime } from "../../host/runtime.ts";
import type { PathScope } from "../../policy/workspace-paths.ts";
import type { Skill } from "../../config/skills.ts";
import type { CallFacts, ResultFacts } from "../../cards/facts.ts";
import type { WireEvent } from "../../protocol/events.ts";

/** Largest `output` a tool hands the model, in UTF-8 bytes. */
export const MAX_OUTPUT_BYTES = 65_536;

/** Largest `summary` and {@link Tool.describe} text, in UTF-8 bytes: the wire's `summary_bytes`. */
export const MAX_SUMMARY_BYTES: number = LIMITS.summary_bytes;

/** What a tool may touch while it runs. */
export interface ToolContext {
  /** The only way to reach files and processes. */
  readonly runtime: Runtime;
  /** The canonical (realpath) working directory of the session; every path is confined to it. */
  readonly workspace: string;
  /** The canonical `MC_HOME`; tools neither read nor write under it. */
  readonly home: string;
  /** Aborts the call (turn cancelled): tools stop early, and shell kills its process group. */
  readonly signal: AbortSignal;
  /** Known secret values (provider keys, configured secrets) to redact from everything returned. */
  readonly secrets: readonly string[];
  /** The enabled skills: `skill` loads them, and `read_file` may read inside their directories. Absent: none. */
  readonly skills?: readonly Skill[];
  /** The run's critical events, for a tool the client executes (`client.tools`); absent outside a run's step. */
  readonly events?: RunEvents;
  /**
   * Called by `write_file` and `edit_file` right before they change the file
   * at canonical `path`, with its content now (null: there is none;
   * `"unreadable"`: it could not be read, past `MAX_WRITE_BYTES` or failing,
   * so no rewind can put the turn back whole) and what replaces it, so
   * `session.rewind` can put it back (`src/rewind/`).
   * Absent: no checkpoints (the client did not negotiate `session.rewind`).
   */
  readonly checkpoint?: TakeCheckpoint;
}

/**
 * What a call may tell the client, in the run's event order: its scope and
 * critical events (the run's `RunIO`, seen from a tool; spelled with the
 * wire's types so tools need nothing of the run).
 */
export interface RunEvents {
  /** The run's scope, stamped on every run event. */
  readonly scope: { readonly session_id: string; readonly run_id: string };
  /** Emits a critical event; false when it could not be delivered (the run then fails as for any undelivered event). */
  emit(event: Exclude<WireEvent, { readonly event: "message.delta" | "run.finished" }>): Promise<boolean>;
}

/** Keeps a file's content before a tool changes it; see {@link ToolContext.checkpoint}. */
export type TakeCheckpoint = (path: string, before: Uint8Array | null | "unreadable", after: Uint8Array) => Promise<void>;

/** How a call ended. */
export interface ToolResult {
  /** Whether the call did what was asked (a shell command exited 0). */
  readonly ok: boolean;
  /** For the model: bounded (≤ 64 KiB UTF-8), redacted. */
  readonly output: string;
  /**
   * For the client's activity event: ≤ 1,024 UTF-8 bytes after redaction,
   * says what ran and how it ended, never raw output or file content.
   */
  readonly summary: string;
  /** How it ended, for its card (`tool.cards`); absent for tools without one. */
  readonly facts?: ResultFacts;
}

/** A JSON Schema object, as providers take it for a function's parameters. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** One built-in tool, taking parameters of type `P`. */
export interface Tool<P> {
  /** The name the model calls it by (`snake_case`). */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** Validates the model's arguments; built with `exactObject`. */
  readonly schema: v.GenericSchema<Record<string, unknown>, P>;
  /** The same schema as JSON Schema, for providers; a test keeps it equal to {@link Tool.schema}. */
  readonly parameters: JsonSchema;
  /**
   * Resolves the call without changing anything: a {@link PreparedCall}, or
   * the `ok: false` result of a call that cannot go ahead (a refused path, an
   * edit that matches nothing). Never throws for bad input.
   */
  prepare(params: P, context: ToolContext): Promise<PreparedCall | ToolResult>;
}

/** A resolved call, ready to be approved and run. */
export interface PreparedCall {
  /**
   * What the call will do, from the resolved call: canonical
   * workspace-relative paths and the whole command, with invisible and bidi
   * characters escaped (`showExactly`). Never cut, so it can be longer than
   * a summary; the approval prompt shows it whole or the call is refused.
   */
  readonly action: string;
  /**
   * What activity summaries say the call does, when they must not show all
   * of {@link action} (an MCP call's arguments are shown for approval only);
   * absent: the action.
   */
  readonly activity?: string;
  /** For the model, when {@link action} is too long to show for approval: why, and what to do instead. */
  readonly tooLongToShow: string;
  /**
   * The call's canonical arguments, what `PreToolUse` and `PostToolUse`
   * hooks receive: the parameters as the tool's schema produced them, a
   * resolved path as the canonical path acted on; absent: the parameters
   * as checked (an external tool's: as the model sent them).
   */
  readonly arguments?: unknown;
  /** Whether the call needs the user's approval even where its policy is `allow` (a hard-linked file). */
  readonly mustAsk: boolean;
  /**
   * What a session grant for this call covers, as the approval prompt shows
   * it (`showExactly`): the canonical workspace-relative path of a file
   * tool, the exact command of `shell`, the server's own tool name of an
   * MCP tool (a grant covers it with any arguments). Absent: the call
   * offers no session scope (`grants/session-grants.ts`).
   */
  readonly scopeTarget?: string;
  /** What the call resolved, for its card (`tool.cards`); absent for tools without one. */
  readonly facts?: CallFacts;
  /** Acts on exactly the prepared target, failing if it changed since; never throws for failed operations. */
  run(): Promise<ToolResult>;
}

/**
 * A tool of any parameter type. `prepare` is a method, so a
 * `Tool<ReadFileParams>` is assignable here; only `prepareCall()` calls it,
 * after the tool's own schema has produced the parameters.
 */
export type AnyTool = Tool<unknown>;

/** Whether `value`, from {@link Tool.prepare}, is a call ready to run rather than a refusal. */
export function isPrepared(value: PreparedCall | ToolResult): value is PreparedCall {
  return "run" in value;
}

/** The scope a tool call resolves its paths in. */
export function scopeOf(context: ToolContext): PathScope {
  return { fs: context.runtime.fs, workspace: context.workspace, home: context.home };
}
