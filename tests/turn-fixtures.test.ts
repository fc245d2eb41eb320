/**
 * Every recorded provider stream (`../shared/fixtures/provider-streams/`,
 * read-only) replayed through a full turn on the in-memory runtime: the
 * selected provider speaks the fixture's API to a loopback fake that serves
 * the recording for the first request. What the client sees (reconciled
 * text, activities, diagnostics, the terminal event, `history.page`) must
 * match the fixture's `observed` block.
 *
 * Tool calls in a recording are executed by the turn: every built-in tool is
 * denied by settings and approvals (should one be asked) are answered with
 * deny, so nothing touches the workspace; the second request gets a short
 * text reply. Each fixture is also replayed cut before its terminal event,
 * which must fail the run as truncated with its partial text.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinTools } from "../src/runner/tools/registry.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import type { Frame } from "./support/harness.ts";
import { line } from "./support/harness.ts";
import { apiPath, type Fixture, frameFixture, loadFixtures, truncatedFrames } from "./support/provider-fixtures.ts";
import { reply } from "./support/provider-scripts.ts";
import { HOME, request, startTurn, startTurnServer, type TurnServer } from "./support/turns.ts";

const fixtures = loadFixtures();
const PROMPT = "Replay the recorded answer";
const DENY_ALL = Object.fromEntries(builtinTools().map((tool) => [tool.name, "deny"]));

type Json = Record<string, unknown>;

/** The model id the recording names (Anthropic's thinking classification depends on it), if any. */
function fixtureModel(fixture: Fixture): string | undefined {
  for (const event of fixture.events) {
    const model = (event.message as Json | undefined)?.model ?? (event.response as Json | undefined)?.model ?? event.model;
    if (typeof model === "string" && model !== "") return model;
  }
  return undefined;
}

/**
 * Whether the recording's reasoning text is a provider summary the client may
 * see. Chat `delta.reasoning` / `reasoning_content` is raw chain of thought
 * (the fixtures file it under `reasoning_summary` anyway), as is
 * claude-3-7-sonnet's thinking; both must never surface.
 */
function surfacesSummary(fixture: Fixture): boolean {
  if (fixture.api === "openai-chat") return false;
  if (fixture.api === "anthropic-messages" && (fixtureModel(fixture) ?? "").startsWith("claude-3-7-sonnet")) return false;
  return true;
}

/**
 * Text and reasoning of a prefix of a recording, by the README's derivation
 * rules (independent of the decoders under test); used for the truncated
 * replays, and checked against `observed` for the whole recording.
 */
function derive(api: ProviderApi, events: readonly Json[]): { text: string; reasoning: string | null } {
  let text = "";
  let reasoning: string | null = null;
  const addReasoning = (piece: unknown) => {
    if (typeof piece === "string") reasoning = (reasoning ?? "") + piece;
  };
  for (const event of events) {
    if (api === "anthropic-messages") {
      const delta = event.type === "content_block_delta" ? event.delta as Json : null;
      if (delta?.type === "text_delta" && typeof delta.text === "string") text += delta.text;
      if (delta?.type === "thinking_delta") addReasoning(delta.thinking);
    } else if (api === "openai-responses") {
      if (event.type === "response.output_text.delta" && typeof event.delta === "string") text += event.delta;
      if (event.type === "response.reasoning_summary_text.delta") addReasoning(event.delta);
    } else {
      const choices = Array.isArray(event.choices) ? event.choices as Json[] : [];
      const delta = choices.find((choice) => (choice.index ?? 0) === 0)?.delta as Json | undefined;
      if (typeof delta?.content === "string") text += delta.content;
      addReasoning(delta?.reasoning_content);
      addReasoning(delta?.reasoning);
    }
  }
  return { text, reasoning };
}

/** The recording's events up to (not including) the terminal one, as {@link truncatedFrames} cuts them. */
function truncatedEvents(fixture: Fixture): Json[] {
  const frames = truncatedFrames(fixture).length;
  return fixture.events.slice(0, frames) as Json[];
}

/** Opaque replay data (signatures, redacted thinking, encrypted reasoning) that must never reach the client. */
function opaqueStrings(fixture: Fixture): string[] {
  const out: string[] = [];
  const visit = (value: unknown, key: string | null) => {
    if (typeof value === "string") {
      if ((key === "signature" || key === "data" || key === "encrypted_content") && value.length >= 16) out.push(value);
    } else if (Array.isArray(value)) for (const item of value) visit(item, null);
    else if (typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) visit(v, k);
  };
  for (const event of fixture.events) visit(event, null);
  return out;
}

/** Waits for `run.finished` of `runId`, answering every approval with deny; returns the run's events. */
async function collectRun(server: TurnServer, sessionId: string, runId: string): Promise<{ events: Frame[]; denied: number }> {
  const answered = new Set<string>();
  // The next wait starts after the frames just examined, not after whatever arrived since.
  for (let seen = 1;;) {
    const frames = await server.waitFrames(seen);
    seen = frames.length + 1;
    const events = frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);
    for (const frame of events) {
      if (frame.event !== "approval.requested") continue;
      const approvalId = (frame.data as { approval_id: string }).approval_id;
      if (answered.has(approvalId)) continue;
      answered.add(approvalId);
      server.runtime.input.push(line(`deny-${answered.size}`, "approval.answer", { session_id: sessionId, run_id: runId, approval_id: approvalId, allow: false }));
    }
    if (events.some((frame) => frame.event === "run.finished")) return { events, denied: answered.size };
  }
}

interface Message {
  readonly id: string;
  text: string;
  partial: boolean;
  lastPart: boolean;
  parts: number;
}

/** Reconciled messages in order of first appearance, their parts concatenated and checked for order. */
function reconciledMessages(events: readonly Frame[]): Message[] {
  const out = new Map<string, Message>();
  for (const frame of events) {
    if (frame.event !== "message.reconcile") continue;
    const data = frame.data as { message_id: string; text: string; partial: boolean; part: number; last_part: boolean };
    const message = out.get(data.message_id) ?? { id: data.message_id, text: "", partial: data.partial, lastPart: false, parts: 0 };
    assert.equal(data.part, message.parts, "reconcile parts arrive in order from 0");
    assert.equal(message.lastPart, false, "nothing follows last_part");
    assert.equal(data.partial, message.partial, "every part of a message agrees on partial");
    message.text += data.text;
    message.parts++;
    message.lastPart = data.last_part;
    out.set(data.message_id, message);
  }
  for (const message of out.values()) assert.equal(message.lastPart, true, `message ${message.id} was reconciled completely`);
  return [...out.values()];
}

/** Delta text of `messageId` in part order, or null when a part is missing (dropped under pressure). */
function deltaText(events: readonly Frame[], messageId: string): string | null {
  const parts = events
    .filter((frame) => frame.event === "message.delta" && (frame.data as { message_id: string }).message_id === messageId)
    .map((frame) => frame.data as { part: number; text: string });
  if (parts.some((part, index) => part.part !== index)) return null;
  return parts.map((part) => part.text).join("");
}

interface Entry {
  readonly kind: string;
  text: string;
  readonly partial: boolean;
}

/** Every history entry of the revision, parts joined, following cursors to the end. */
async function history(server: TurnServer, sessionId: string, revision: string): Promise<{ entries: Entry[]; complete: boolean }> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  let open = null as { id: string; entry: Entry } | null;
  for (let page = 0;; page++) {
    const response = await request(server, `page-${page}`, "history.page", { session_id: sessionId, revision, cursor });
    assert.ok(response.result, `history.page succeeded: ${JSON.stringify(response.error)}`);
    const result = response.result as {
      entries: { message_id: string; kind: string; text: string; partial: boolean; part: number; last_part: boolean }[];
      next_cursor: string | null;
      complete: boolean;
    };
    for (const raw of result.entries) {
      if (raw.part === 0) {
        open = { id: raw.message_id, entry: { kind: raw.kind, text: raw.text, partial: raw.partial } };
        entries.push(open.entry);
      } else {
        assert.ok(open !== null && open.id === raw.message_id, "continuation parts follow their message");
        open.entry.text += raw.text;
      }
    }
    if (result.next_cursor === null) return { entries, complete: result.complete };
    cursor = result.next_cursor;
  }
}

/**
 * The second request must replay the recorded calls exactly and pair each
 * with a (refusing) result; a Responses reasoning item is replayed once, with
 * the encrypted content of its `output_item.done` (which differs from the
 * `added` one in the recordings).
 */
function assertToolRoundTrip(fixture: Fixture, body: Json): void {
  const { api } = fixture;
  const calls = fixture.observed.tool_calls;
  const ids = calls.map((call) => call.id);
  if (api === "openai-chat") {
    const messages = body.messages as Json[];
    const assistant = messages.find((message) => message.role === "assistant" && Array.isArray(message.tool_calls))!;
    assert.deepEqual(
      (assistant.tool_calls as { id: string; function: { name: string; arguments: string } }[]).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments_json: call.function.arguments,
      })),
      calls,
    );
    assert.deepEqual(messages.filter((message) => message.role === "tool").map((message) => message.tool_call_id), ids);
  } else if (api === "openai-responses") {
    const input = body.input as Json[];
    assert.deepEqual(
      input.filter((item) => item.type === "function_call").map((item) => ({ id: item.call_id, name: item.name, arguments_json: item.arguments })),
      calls,
    );
    assert.deepEqual(input.filter((item) => item.type === "function_call_output").map((item) => item.call_id), ids);
    const reasoning = fixture.events
      .filter((event) => event.type === "response.output_item.done" && (event.item as Json).type === "reasoning")
      .map((event) => event.item as Json)
      .filter((item) => typeof item.encrypted_content === "string")
      .map((item) => ({ id: item.id, encrypted_content: item.encrypted_content }));
    assert.deepEqual(input.filter((item) => item.type === "reasoning").map((item) => ({ id: item.id, encrypted_content: item.encrypted_content })), reasoning);
  } else {
    const blocks = (body.messages as { role: string; content: Json[] }[]).flatMap((turn) => turn.content);
    assert.deepEqual(
      blocks.filter((block) => block.type === "tool_use").map((block) => ({ id: block.id, name: block.name, input: block.input })),
      calls.map((call) => ({ id: call.id, name: call.name, input: call.arguments_json === "" ? {} : JSON.parse(call.arguments_json) })),
    );
    const results = blocks.filter((block) => block.type === "tool_result");
    assert.deepEqual(results.map((block) => block.tool_use_id), ids);
    assert.ok(results.every((block) => block.is_error === true));
  }
}

async function stop(server: TurnServer): Promise<void> {
  server.runtime.input.end();
  assert.equal(await server.exit, 0);
  await server.provider.close();
}

function diagnosticsOf(events: readonly Frame[]): { code: string; summary: string }[] {
  return events.filter((frame) => frame.event === "diagnostic").map((frame) => frame.data as { code: string; summary: string });
}

describe("recorded provider streams through a full turn", () => {
  it("the fixture set and this file's derivation agree with every `observed` block", () => {
    assert.ok(fixtures.length >= 21);
    for (const fixture of fixtures) {
      const derived = derive(fixture.api, fixture.events as Json[]);
      assert.equal(derived.text, fixture.observed.text, fixture.rel);
      assert.equal(derived.reasoning, fixture.observed.reasoning_summary, fixture.rel);
    }
  });

  for (const fixture of fixtures) {
    const { observed, api } = fixture;
    const failed = observed.error !== null;
    const executesTools = !failed && observed.tool_calls.length > 0;

    it(`${fixture.rel}: the client sees what was observed`, async () => {
      const model = fixtureModel(fixture);
      const server = await startTurnServer(api, { settings: { tools: DENY_ALL }, ...(model === undefined ? {} : { model }) });
      server.provider.enqueue({ chunks: frameFixture(fixture) });
      if (executesTools) server.provider.enqueue(reply(api, { text: ["ok"] }));
      const { sessionId, runId } = await startTurn(server, PROMPT);
      const { events, denied } = await collectRun(server, sessionId, runId);

      // Ordering and the terminal event.
      const names = events.map((frame) => frame.event);
      assert.equal(names[0], "input.persisted");
      assert.equal(names.indexOf("run.finished"), names.length - 1);
      const finished = events.at(-1)!.data as { outcome: string; persistence: string; revision: string | null; error_code: string | null };
      assert.deepEqual(
        [finished.outcome, finished.persistence, finished.error_code],
        failed ? ["failed", "durable", "execution_failed"] : ["completed", "durable", null],
      );

      // Diagnostics: a provider error fails the run; a length stop completes with a warning.
      const expectedDiagnostics = failed
        ? ["provider_stream_error"]
        : observed.finish === "max_tokens" || observed.finish === "length"
        ? ["output_token_limit"]
        : observed.finish === "content_filter"
        ? ["content_filtered"]
        : [];
      const diagnostics = diagnosticsOf(events);
      assert.deepEqual(diagnostics.map((d) => d.code), expectedDiagnostics);

      // Reconciled text: the recording's text (redaction is a no-op on it), then the follow-up answer.
      const messages = reconciledMessages(events);
      const expectedMessages = [
        ...(observed.text === "" ? [] : [{ text: observed.text, partial: failed }]),
        ...(executesTools ? [{ text: "ok", partial: false }] : []),
      ];
      assert.deepEqual(messages.map((m) => ({ text: m.text, partial: m.partial })), expectedMessages);
      for (const message of messages) {
        const shown = deltaText(events, message.id);
        if (shown !== null) assert.ok(message.text.startsWith(shown), `deltas of ${message.id} are a prefix of its reconciliation`);
      }
      // The stream redactor holds back a tail as long as the longest known secret and cuts only at
      // whitespace, so a short reply arrives only as its reconciliation; a longer one must stream.
      if (/\s/.test(observed.text.slice(0, -64))) assert.notEqual(deltaText(events, messages[0]!.id), "", "the recording's text streamed as deltas");

      // Tool calls: one activity each, in order, refused (unknown tool or denied), and a second request.
      const activities = events.filter((frame) => frame.event === "activity").map((frame) => frame.data as {
        activity_id: string;
        kind: string;
        state: string;
        name: string;
        summary: string;
      });
      const expectedCalls = executesTools ? observed.tool_calls : [];
      assert.deepEqual(activities.map((a) => [a.kind, a.name, a.state]), expectedCalls.map((call) => ["tool", call.name, "failed"]));
      assert.equal(new Set(activities.map((a) => a.activity_id)).size, activities.length);
      assert.equal(denied, 0, "no approval is asked for unknown or denied tools");
      assert.equal(server.provider.log.length, executesTools ? 2 : 1);
      assert.equal(server.provider.log[0]!.url, apiPath(api));
      assert.match(JSON.stringify(server.provider.log[0]!.body), new RegExp(PROMPT));
      if (executesTools) assertToolRoundTrip(fixture, server.provider.log[1]!.body as Json);

      // History: summary exactly when the provider sent one, then the answer, warnings, activities.
      assert.ok(finished.revision !== null);
      const page = await history(server, sessionId, finished.revision);
      const summary = surfacesSummary(fixture) ? observed.reasoning_summary : null;
      assert.deepEqual(page.entries, [
        { kind: "user", text: PROMPT, partial: false },
        ...(summary === null ? [] : [{ kind: "reasoning_summary", text: summary, partial: false }]),
        ...(observed.text === "" ? [] : [{ kind: "assistant", text: observed.text, partial: failed }]),
        ...diagnostics.map((d) => ({ kind: "diagnostic", text: d.summary, partial: false })),
        ...activities.map((a) => ({ kind: "activity", text: a.summary, partial: false })),
        ...(executesTools ? [{ kind: "assistant", text: "ok", partial: false }] : []),
      ]);
      assert.equal(page.complete, true);

      // Raw reasoning and opaque replay data never reach the client or the session file.
      const seen = JSON.stringify(server.frames());
      const stored = new TextDecoder().decode(server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`));
      if (observed.reasoning_summary !== null && summary === null) {
        assert.ok(!seen.includes(JSON.stringify(observed.reasoning_summary).slice(1, -1)), "raw reasoning is never shown");
        assert.ok(!stored.includes(JSON.stringify(observed.reasoning_summary).slice(1, -1)), "raw reasoning is never stored");
      }
      for (const opaque of opaqueStrings(fixture)) assert.ok(!seen.includes(opaque), "opaque replay data is never shown");
      if (failed) assert.ok(!seen.includes(observed.error!.message), "the provider's error message is never shown");
      await stop(server);
    });

    it(`${fixture.rel} cut before its terminal event: failed as truncated, keeping its partial text`, async () => {
      const model = fixtureModel(fixture);
      const server = await startTurnServer(api, { settings: { tools: DENY_ALL }, ...(model === undefined ? {} : { model }) });
      server.provider.enqueue({ chunks: truncatedFrames(fixture) });
      const { sessionId, runId } = await startTurn(server, PROMPT);
      const { events } = await collectRun(server, sessionId, runId);
      const finished = events.at(-1)!.data as { outcome: string; persistence: string; revision: string | null; error_code: string | null };
      assert.equal(events.at(-1)!.event, "run.finished");
      assert.deepEqual([finished.outcome, finished.persistence, finished.error_code], ["failed", "durable", "execution_failed"]);
      const diagnostics = diagnosticsOf(events);
      assert.deepEqual(diagnostics.map((d) => d.code), ["provider_stream_truncated"]);
      const prefix = derive(api, truncatedEvents(fixture));
      const messages = reconciledMessages(events);
      assert.deepEqual(messages.map((m) => ({ text: m.text, partial: m.partial })), prefix.text === "" ? [] : [{ text: prefix.text, partial: true }]);
      assert.equal(events.filter((frame) => frame.event === "activity").length, 0, "a truncated step runs no tools");
      assert.equal(server.provider.log.length, 1);

      assert.ok(finished.revision !== null);
      const page = await history(server, sessionId, finished.revision);
      const summary = surfacesSummary(fixture) ? prefix.reasoning : null;
      assert.deepEqual(page.entries, [
        { kind: "user", text: PROMPT, partial: false },
        ...(summary === null ? [] : [{ kind: "reasoning_summary", text: summary, partial: false }]),
        ...(prefix.text === "" ? [] : [{ kind: "assistant", text: prefix.text, partial: true }]),
        ...diagnostics.map((d) => ({ kind: "diagnostic", text: d.summary, partial: false })),
      ]);
      assert.equal(page.complete, true);
      await stop(server);
    });
  }
});
