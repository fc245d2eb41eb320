/**
 * What a hook's ending means (docs/features/runner.md, "Hooks"): exit 0 is
 * "proceed", with an optional JSON object on stdout; exit 2 is "block", its
 * stderr the reason; anything else (another code, a signal, a timeout, a
 * program that could not start, output over the bound, stdout that is not
 * the JSON the event takes, more than 64 KiB on stdout with exit 0) is a hook
 * failure, which never blocks anything, except that a `PreToolUse` hook
 * whose input is over 1 MiB blocks the call: the model cannot pad its
 * arguments past a veto. Exit 2's stderr reason is its first
 * 64 KiB, whatever follows; what a hook prints on the stream its ending does
 * not read is ignored, so a flood there never turns a veto into "proceed".
 *
 * The JSON fields each event takes:
 *
 * | event | `decision` | `reason` | `additional_context` |
 * | --- | --- | --- | --- |
 * | `PreToolUse` | `allow`, `ask`, `deny` | yes | no |
 * | `PostToolUse` | no | no | yes |
 * | `UserPromptSubmit` | `deny` | yes | yes |
 * | `Stop` | `deny` (do not stop yet) | yes | no |
 *
 * A field an event does not take is a failure, so a misspelt decision never
 * passes for "proceed". Every text is redacted against the known secrets and
 * cut to {@link MAX_HOOK_TEXT_BYTES}.
 *
 * @module
 */

import type { HookEvent } from "../config/hooks-settings.ts";
import { redactSecrets } from "../util/redaction.ts";
import { clampUtf8, sanitizeText } from "../util/utf8.ts";
import type { HookProcessResult } from "./hook-process.ts";

/** Longest reason or context one hook gives the model, in UTF-8 bytes. */
export const MAX_HOOK_TEXT_BYTES = 10_000;

/** Why a call whose hook input exceeds 1 MiB is denied rather than run unchecked. */
export const TOO_LARGE_TO_CHECK = "its arguments are too large (over 1 MiB) for the hook to check, so it was not run. Make smaller calls.";

/** One hook's answer. */
export type HookAnswer =
  | {
    readonly kind: "proceed";
    readonly decision: "allow" | "ask" | "deny" | null;
    readonly reason: string | null;
    readonly context: string | null;
  }
  | { readonly kind: "block"; readonly reason: string | null }
  | { readonly kind: "failed"; readonly why: string }
  | { readonly kind: "cancelled" };

const TAKES: Readonly<Record<HookEvent, { decisions: readonly string[]; reason: boolean; context: boolean }>> = {
  PreToolUse: { decisions: ["allow", "ask", "deny"], reason: true, context: false },
  PostToolUse: { decisions: [], reason: false, context: true },
  UserPromptSubmit: { decisions: ["deny"], reason: true, context: true },
  Stop: { decisions: ["deny"], reason: true, context: false },
};

/** `bytes` as UTF-8, null when invalid; `cut` (the stream went on) drops a character the cut split. */
function text(bytes: Uint8Array, cut = false): string | null {
  try {
    // A fresh decoder each time: streaming keeps an incomplete last character back instead of failing on it.
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: cut });
  } catch {
    return null;
  }
}

/** `raw` redacted and bounded for the model; null when nothing is left. */
function forModel(raw: string, secrets: readonly string[]): string | null {
  const shown = clampUtf8(redactSecrets(sanitizeText(raw).trim(), secrets), MAX_HOOK_TEXT_BYTES);
  return shown === "" ? null : shown;
}

function parsedStdout(event: HookEvent, stdout: string, secrets: readonly string[]): HookAnswer {
  if (stdout.trim() === "") return { kind: "proceed", decision: null, reason: null, context: null };
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch {
    return { kind: "failed", why: "printed something other than JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "failed", why: "printed JSON that is not an object" };
  const takes = TAKES[event];
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const allowed = (key === "decision" && takes.decisions.length > 0) || (key === "reason" && takes.reason) || (key === "additional_context" && takes.context);
    if (!allowed) return { kind: "failed", why: `answered with a field ${event} does not take` };
  }
  const { decision, reason, additional_context: context } = fields;
  if (decision !== undefined && (typeof decision !== "string" || !takes.decisions.includes(decision))) {
    return { kind: "failed", why: `answered with a decision ${event} does not take` };
  }
  if ((reason !== undefined && typeof reason !== "string") || (context !== undefined && typeof context !== "string")) {
    return { kind: "failed", why: "answered with a reason or context that is not a string" };
  }
  return {
    kind: "proceed",
    decision: (decision ?? null) as "allow" | "ask" | "deny" | null,
    reason: reason === undefined ? null : forModel(reason, secrets),
    context: context === undefined ? null : forModel(context, secrets),
  };
}

/** The answer `result` gives for `event`. */
export function hookAnswer(event: HookEvent, result: HookProcessResult, secrets: readonly string[]): HookAnswer {
  switch (result.kind) {
    case "cancelled":
      return { kind: "cancelled" };
    case "timed_out":
      return { kind: "failed", why: "timed out (its process group was killed)" };
    case "not_started":
      return { kind: "failed", why: "could not be started (not found or not executable)" };
    case "input_too_large":
      // The model sizes a call's arguments: a veto it could pad its way past would be no veto.
      return event === "PreToolUse" ? { kind: "block", reason: TOO_LARGE_TO_CHECK } : { kind: "failed", why: "was not run: its input exceeds 1 MiB" };
  }
  const { status } = result;
  if (status.code === null) return { kind: "failed", why: `was killed by ${status.signal ?? "a signal"}` };
  // Only the stream an ending reads can spoil it: a veto (exit 2, or a deny on stdout) never fails open for a flood on the other.
  if (status.code === 2) {
    const stderr = text(result.stderr, result.overflowed.stderr);
    return { kind: "block", reason: stderr === null ? null : forModel(stderr, secrets) };
  }
  if (status.code !== 0) return { kind: "failed", why: `exited with code ${status.code}` };
  if (result.overflowed.stdout) return { kind: "failed", why: "printed more than 64 KiB on stdout" };
  const stdout = text(result.stdout);
  return stdout === null ? { kind: "failed", why: "printed invalid UTF-8" } : parsedStdout(event, stdout, secrets);
}
