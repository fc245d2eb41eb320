/**
 * The recorded provider streams in `../shared/fixtures/provider-streams/`
 * (read-only), re-framed as SSE the way their README says, plus scripted
 * failure responses for the fake provider.
 *
 * Framing: `event: <type>\ndata: <json>\n\n` for Anthropic and Responses;
 * `data: <json>\n\n` for chat, plus `data: [DONE]\n\n` where the README's
 * notes say the recording ended with one. SSE comment lines the README
 * mentions (positions not stored) are sent before the first event.
 *
 * @module
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProviderApi } from "../../src/config/settings.ts";
import type { Script } from "./fake-provider.ts";
import { repoRoot } from "./processes.ts";

/** Where the shared fixtures live, beside the repository. */
export const FIXTURE_ROOT = join(repoRoot(), "..", "shared", "fixtures", "provider-streams");

/** The outcome each recording carries, as the fixtures spell it. */
export interface Observed {
  readonly text: string;
  readonly tool_calls: readonly { readonly id: string; readonly name: string; readonly arguments_json: string }[];
  readonly reasoning_summary: string | null;
  readonly finish: string | null;
  readonly error: { readonly code: number | string; readonly message: string } | null;
}

/** One fixture file with the framing facts from the README. */
export interface Fixture {
  /** `<api>/<name>.json`. */
  readonly rel: string;
  readonly api: ProviderApi;
  readonly events: readonly Record<string, unknown>[];
  readonly observed: Observed;
  /** The recording ended with `data: [DONE]` (chat only). */
  readonly done: boolean;
  /** SSE comment keep-alives the recording had. */
  readonly comments: { readonly count: number; readonly line: string } | null;
}

function readmeNotes(): Map<string, string> {
  const notes = new Map<string, string>();
  for (const line of readFileSync(join(FIXTURE_ROOT, "README.md"), "utf8").split("\n")) {
    const match = /^\| `([^`]+\.json)` \|.*\| ([^|]*) \|$/.exec(line);
    if (match) notes.set(match[1]!, match[2]!);
  }
  return notes;
}

/** Every fixture file, sorted by path. */
export function loadFixtures(): Fixture[] {
  const notes = readmeNotes();
  const out: Fixture[] = [];
  for (const dir of readdirSync(FIXTURE_ROOT, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const file of readdirSync(join(FIXTURE_ROOT, dir)).filter((f) => f.endsWith(".json")).sort()) {
      const rel = `${dir}/${file}`;
      const parsed = JSON.parse(readFileSync(join(FIXTURE_ROOT, rel), "utf8"));
      const note = notes.get(rel) ?? "";
      const comments = /(\d+) SSE comment lines \(`(: [^`]*)`\)/.exec(note);
      out.push({
        rel,
        api: parsed.api,
        events: parsed.events,
        observed: parsed.observed,
        done: /ends with `data: \[DONE\]`/.test(note),
        comments: comments ? { count: Number(comments[1]), line: comments[2]! } : null,
      });
    }
  }
  return out;
}

/** One SSE frame for one recorded event. */
export function frameEvent(api: ProviderApi, event: Record<string, unknown>, newline = "\n"): string {
  const data = JSON.stringify(event);
  return api === "openai-chat" ? `data: ${data}${newline}${newline}` : `event: ${String(event.type)}${newline}data: ${data}${newline}${newline}`;
}

/** The fixture as SSE frames, one string per event. */
export function frameFixture(fixture: Fixture, newline = "\n"): string[] {
  const frames: string[] = [];
  for (let i = 0; fixture.comments !== null && i < fixture.comments.count; i++) frames.push(`${fixture.comments.line}${newline}${newline}`);
  for (const event of fixture.events) frames.push(frameEvent(fixture.api, event, newline));
  if (fixture.api === "openai-chat" && fixture.done) frames.push(`data: [DONE]${newline}${newline}`);
  return frames;
}

function isTerminal(api: ProviderApi, event: Record<string, unknown>): boolean {
  if (api === "anthropic-messages") return event.type === "message_stop";
  if (api === "openai-responses") return typeof event.type === "string" && /^response\.(completed|incomplete|failed)$/.test(event.type);
  const choices = Array.isArray(event.choices) ? event.choices : [];
  return choices.some((choice: { finish_reason?: unknown }) => choice.finish_reason != null);
}

/** The fixture cut just before its terminal event (and any `[DONE]`): a stream a client must call truncated. */
export function truncatedFrames(fixture: Fixture): string[] {
  const cut = fixture.events.findIndex((event) => isTerminal(fixture.api, event));
  return fixture.events.slice(0, cut === -1 ? fixture.events.length : cut).map((event) => frameEvent(fixture.api, event));
}

/** The request path each API is posted to, below the base URL. */
export function apiPath(api: ProviderApi): string {
  return api === "anthropic-messages" ? "/v1/messages" : api === "openai-responses" ? "/v1/responses" : "/v1/chat/completions";
}

/** A forced HTTP error in the API's own JSON error shape; `message` lets tests plant a secret. */
export function errorScript(api: ProviderApi, status: 401 | 429 | 500, message: string, retryAfter?: string): Script {
  const type = status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "api_error";
  const body = api === "anthropic-messages"
    ? { type: "error", error: { type, message } }
    : { error: { message, type, code: status === 401 ? "invalid_api_key" : null } };
  return { status, body, headers: retryAfter === undefined ? {} : { "retry-after": retryAfter } };
}
