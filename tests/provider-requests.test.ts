import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import type { ModelMessage, RequestParams, ToolSpec } from "../src/runner/providers/conversation.ts";
import type { ProviderEvent } from "../src/runner/providers/events.ts";
import { type ClaudeModel, parseClaudeModel } from "../src/runner/providers/request-anthropic.ts";
import { assistantFromEvents, buildRequest } from "../src/runner/providers/request.ts";
import { decodeStream } from "../src/runner/providers/stream.ts";
import type { Endpoint } from "../src/config/providers.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { frameFixture, loadFixtures } from "./support/provider-fixtures.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { assertPaired, given, leaves } from "./support/request-checks.ts";
import { runtimeFetch } from "./support/runtime-fetch.ts";
import { type Effort, EFFORTS } from "../src/policy/efforts.ts";

const KEY = "sk-test-PLANTED-0123456789abcdef";
const APIS: readonly ProviderApi[] = ["anthropic-messages", "openai-responses", "openai-chat"];

function endpoint(api: ProviderApi, baseUrl = "https://api.example.test/v1"): Endpoint {
  return { name: "test", api, baseUrl, apiKeyEnv: null, defaultModel: null };
}

const READ_FILE: ToolSpec = {
  name: "read_file",
  description: "Reads a file.",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

const CONVERSATION: readonly ModelMessage[] = [
  { role: "system", text: "You are terse." },
  { role: "user", text: "read a.txt" },
  {
    role: "assistant",
    text: "Reading it.",
    toolCalls: [{ id: "call_1", name: "read_file", argumentsJson: '{"path":"a.txt"}' }],
    replay: [
      { kind: "anthropic.thinking", thinking: "I should read it", signature: "SIG" },
      { kind: "openai.reasoning", id: "rs_1", encryptedContent: "ENC" },
    ],
  },
  { role: "tool", callId: "call_1", name: "read_file", output: "hello", isError: false },
  { role: "assistant", text: "It says hello.", toolCalls: [], replay: [] },
  { role: "user", text: "thanks" },
];

function params(overrides: Partial<RequestParams> = {}): RequestParams {
  return { model: "m-1", effort: "default", messages: CONVERSATION, tools: [READ_FILE], apiKey: KEY, maxOutputTokens: 4096, ...overrides };
}

function body(api: ProviderApi, overrides: Partial<RequestParams> = {}): Record<string, unknown> {
  return JSON.parse(buildRequest(endpoint(api), params(overrides)).body);
}

describe("request bodies for a two-turn conversation with a tool call", () => {
  it("anthropic: system apart, signed thinking before tool_use, tool_result in a user turn", () => {
    assert.deepEqual(body("anthropic-messages"), {
      model: "m-1",
      stream: true,
      max_tokens: 4096,
      system: "You are terse.",
      messages: [
        { role: "user", content: [{ type: "text", text: "read a.txt" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should read it", signature: "SIG" },
            { type: "text", text: "Reading it." },
            { type: "tool_use", id: "call_1", name: "read_file", input: { path: "a.txt" } },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "hello" }] },
        { role: "assistant", content: [{ type: "text", text: "It says hello." }] },
        { role: "user", content: [{ type: "text", text: "thanks" }] },
      ],
      tools: [{ name: "read_file", description: "Reads a file.", input_schema: READ_FILE.parameters }],
    });
  });

  it("responses: instructions, stateless reasoning replay, function_call items joined by call_id", () => {
    assert.deepEqual(body("openai-responses"), {
      model: "m-1",
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content"],
      max_output_tokens: 4096,
      instructions: "You are terse.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "read a.txt" }] },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "ENC" },
        { role: "assistant", content: [{ type: "output_text", text: "Reading it." }] },
        { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' },
        { type: "function_call_output", call_id: "call_1", output: "hello" },
        { role: "assistant", content: [{ type: "output_text", text: "It says hello." }] },
        { role: "user", content: [{ type: "input_text", text: "thanks" }] },
      ],
      tools: [{ type: "function", name: "read_file", description: "Reads a file.", parameters: READ_FILE.parameters, strict: false }],
    });
  });

  it("chat: system first, tool_calls then role tool, no reasoning replay", () => {
    assert.deepEqual(body("openai-chat"), {
      model: "m-1",
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 4096,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "read a.txt" },
        {
          role: "assistant",
          content: "Reading it.",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "hello" },
        { role: "assistant", content: "It says hello." },
        { role: "user", content: "thanks" },
      ],
      tools: [{ type: "function", function: { name: "read_file", description: "Reads a file.", parameters: READ_FILE.parameters } }],
    });
  });

  it("edge shapes: errored result, empty-text call, unparseable arguments, no system, no tools", () => {
    const messages: ModelMessage[] = [
      { role: "user", text: "go" },
      { role: "assistant", text: "", toolCalls: [{ id: "c", name: "t", argumentsJson: "" }], replay: [] },
      { role: "tool", callId: "c", name: "t", output: "boom", isError: true },
    ];
    const anthropic = body("anthropic-messages", { messages, tools: [] });
    assert.deepEqual(anthropic.messages, [
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c", name: "t", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: "boom", is_error: true }] },
    ]);
    assert.ok(!("system" in anthropic) && !("tools" in anthropic));
    const chat = body("openai-chat", { messages, tools: [] });
    assert.deepEqual((chat.messages as unknown[])[1], { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "t", arguments: "" } }] });
    assert.ok(!("instructions" in body("openai-responses", { messages, tools: [] })));
  });
});

describe("effort mapping", () => {
  const table: Record<Effort, { anthropic: number | null; responses: string | null; chat: string | null }> = {
    default: { anthropic: null, responses: null, chat: null },
    low: { anthropic: 2_048, responses: "low", chat: "low" },
    medium: { anthropic: 8_192, responses: "medium", chat: "medium" },
    high: { anthropic: 16_384, responses: "high", chat: "high" },
    xhigh: { anthropic: 32_000, responses: "xhigh", chat: "high" },
    max: { anthropic: 48_000, responses: "xhigh", chat: "high" },
  };
  for (const effort of EFFORTS) {
    it(`${effort}`, () => {
      const row = table[effort];
      const anthropic = body("anthropic-messages", { effort });
      if (row.anthropic === null) {
        assert.ok(!("thinking" in anthropic));
        assert.equal(anthropic.max_tokens, 4096);
      } else {
        assert.deepEqual(anthropic.thinking, { type: "enabled", budget_tokens: row.anthropic });
        assert.equal(anthropic.max_tokens, row.anthropic + 4096);
      }
      const responses = body("openai-responses", { effort });
      assert.deepEqual(responses.reasoning, row.responses === null ? undefined : { effort: row.responses, summary: "auto" });
      const chat = body("openai-chat", { effort });
      assert.equal(chat.reasoning_effort, row.chat === null ? undefined : row.chat);
    });
  }
});

describe("anthropic model ids", () => {
  const cases: [string, ClaudeModel | null][] = [
    ["claude-opus-4-6", { family: "opus", major: 4, minor: 6 }],
    ["claude-sonnet-4-6-20260215", { family: "sonnet", major: 4, minor: 6 }],
    ["claude-sonnet-4-5", { family: "sonnet", major: 4, minor: 5 }],
    ["claude-opus-4-10", { family: "opus", major: 4, minor: 10 }],
    ["claude-haiku-5", { family: "haiku", major: 5, minor: 0 }],
    ["claude-sonnet-5", { family: "sonnet", major: 5, minor: 0 }],
    ["claude-haiku-5-5", { family: "haiku", major: 5, minor: 5 }],
    ["claude-fable-5", { family: "fable", major: 5, minor: 0 }],
    // An 8-digit snapshot date is not a minor version.
    ["claude-opus-4-20250514", { family: "opus", major: 4, minor: 0 }],
    ["claude-opus-4-1-20250805", { family: "opus", major: 4, minor: 1 }],
    ["claude-opus-4-7-latest", { family: "opus", major: 4, minor: 7 }],
    // Versions before Claude 4 come first in the id.
    ["claude-3-7-sonnet-latest", { family: "sonnet", major: 3, minor: 7 }],
    ["claude-3-5-haiku-20241022", { family: "haiku", major: 3, minor: 5 }],
    ["claude-3-opus-20240229", { family: "opus", major: 3, minor: 0 }],
    // Gateway and cloud spellings.
    ["us.anthropic.claude-opus-4-6-v1:0", { family: "opus", major: 4, minor: 6 }],
    ["anthropic/claude-sonnet-4.6", { family: "sonnet", major: 4, minor: 6 }],
    ["claude-opus-4-7@20260101", { family: "opus", major: 4, minor: 7 }],
    ["Claude-Opus-4-6", { family: "opus", major: 4, minor: 6 }],
    ["", null],
    ["m-1", null],
    ["gpt-5.4", null],
    ["claude", null],
    ["claude-opus", null],
    ["claude-opus-latest", null],
    ["claude-mythos-preview", null],
    ["claude-opus-4x", null],
    ["claude-opus-4-6x", null],
    ["claude-opus-4-6-", null],
    ["claude-opus-4-6 ", null],
    ["claude-4-6", null],
    ["my-claude-opus-4-6", null],
    ["claude-opus-4-6/other", null],
  ];
  for (const [model, expected] of cases) {
    it(`${JSON.stringify(model)} reads as ${expected === null ? "unknown" : `${expected.family} ${expected.major}.${expected.minor}`}`, () => {
      assert.deepEqual(parseClaudeModel(model), expected);
    });
  }
});

describe("anthropic adaptive thinking (Claude 4.6 and later)", () => {
  const SENT: Record<"4.6" | "4.7+", Record<Exclude<Effort, "default">, string>> = {
    "4.6": { low: "low", medium: "medium", high: "high", xhigh: "high", max: "max" },
    "4.7+": { low: "low", medium: "medium", high: "high", xhigh: "xhigh", max: "max" },
  };
  const ROOM: Record<Exclude<Effort, "default">, number> = { low: 2_048, medium: 8_192, high: 16_384, xhigh: 32_000, max: 48_000 };
  const models: [string, "4.6" | "4.7+" | "budget"][] = [
    ["claude-opus-4-6", "4.6"],
    ["claude-sonnet-4-6-20260215", "4.6"],
    ["claude-opus-4-7", "4.7+"],
    ["claude-opus-4-10", "4.7+"],
    ["claude-haiku-5", "4.7+"],
    ["claude-sonnet-5", "4.7+"],
    ["claude-sonnet-4-5", "budget"],
    ["claude-opus-4-5-20251101", "budget"],
    ["claude-haiku-4-5", "budget"],
    ["claude-3-7-sonnet-latest", "budget"],
    ["m-1", "budget"],
    ["claude-mythos-preview", "budget"],
  ];
  for (const [model, kind] of models) {
    it(`${model}: ${kind === "budget" ? "fixed budget" : `adaptive, as Claude ${kind}`}`, () => {
      for (const effort of EFFORTS) {
        const sent = body("anthropic-messages", { model, effort });
        // Thinking rejects a non-default temperature; none is ever sent.
        for (const key of ["temperature", "top_p", "top_k"]) assert.ok(!(key in sent), `${model} ${effort}: ${key}`);
        if (effort === "default") {
          assert.ok(!("thinking" in sent) && !("output_config" in sent), `${model}: default sends no thinking settings`);
          assert.equal(sent.max_tokens, 4096);
          continue;
        }
        assert.equal(sent.max_tokens, 4096 + ROOM[effort], `${model} ${effort}`);
        if (kind === "budget") {
          assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: ROOM[effort] });
          assert.ok(!("output_config" in sent));
        } else {
          assert.deepEqual(sent.thinking, { type: "adaptive", display: "summarized" });
          assert.deepEqual(sent.output_config, { effort: SENT[kind][effort] }, `${model} ${effort}`);
        }
      }
    });
  }

  it("keeps the rest of the body unchanged", () => {
    const adaptive = body("anthropic-messages", { model: "claude-opus-4-7", effort: "high" });
    const plain = body("anthropic-messages", { model: "claude-opus-4-7" });
    const { thinking: _thinking, output_config: _config, max_tokens: _max, ...rest } = adaptive;
    const { max_tokens: _plainMax, ...plainRest } = plain;
    assert.deepEqual(rest, plainRest);
    assert.deepEqual(Object.keys(adaptive), ["model", "stream", "max_tokens", "system", "messages", "tools", "thinking", "output_config"]);
  });
});

describe("headers and URLs", () => {
  it("sends the key in the API's header, and no auth header without a key", () => {
    for (const api of APIS) {
      const withKey = buildRequest(endpoint(api), params());
      const without = buildRequest(endpoint(api), params({ apiKey: null }));
      const name = api === "anthropic-messages" ? "x-api-key" : "authorization";
      assert.equal(withKey.headers[name], api === "anthropic-messages" ? KEY : `Bearer ${KEY}`);
      assert.ok(!withKey.body.includes(KEY) && !withKey.url.includes(KEY));
      assert.deepEqual(Object.keys(without.headers).filter((h) => h === "x-api-key" || h === "authorization"), []);
      assert.equal(withKey.headers["content-type"], "application/json");
      assert.equal(without.headers["anthropic-version"], api === "anthropic-messages" ? "2023-06-01" : undefined);
    }
  });

  it("joins base URLs with or without a trailing slash and keeps path prefixes", () => {
    const cases: [ProviderApi, string, string][] = [
      ["anthropic-messages", "https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages"],
      ["anthropic-messages", "https://api.anthropic.com/v1/", "https://api.anthropic.com/v1/messages"],
      ["openai-responses", "https://api.openai.com/v1", "https://api.openai.com/v1/responses"],
      ["openai-responses", "https://gw.example/openai/v1//", "https://gw.example/openai/v1/responses"],
      ["openai-chat", "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/chat/completions"],
      ["openai-chat", "https://openrouter.ai/api/v1/", "https://openrouter.ai/api/v1/chat/completions"],
      ["openai-chat", "http://localhost:8000", "http://localhost:8000/chat/completions"],
    ];
    for (const [api, base, url] of cases) assert.equal(buildRequest(endpoint(api, base), params()).url, url);
  });
});

// Properties: a random history (orphan results, unanswered and duplicated call ids, empty texts).
const text = fc.string({ maxLength: 12 });
const callId = fc.constantFrom("c1", "c2", "c3", "c4");
const argsJson = fc.oneof(text, fc.dictionary(text, text, { maxKeys: 2 }).map((value) => JSON.stringify(value)));
const message: fc.Arbitrary<ModelMessage> = fc.oneof(
  fc.record({ role: fc.constant("system" as const), text }),
  fc.record({ role: fc.constant("user" as const), text }),
  fc.record({
    role: fc.constant("assistant" as const),
    text,
    toolCalls: fc.array(fc.record({ id: callId, name: text, argumentsJson: argsJson }), { maxLength: 3 }),
    replay: fc.array(fc.oneof(
      fc.record({ kind: fc.constant("anthropic.thinking" as const), thinking: text, signature: text }),
      fc.record({ kind: fc.constant("anthropic.redacted_thinking" as const), data: text }),
      fc.record({ kind: fc.constant("openai.reasoning" as const), id: fc.option(text), encryptedContent: text }),
    ), { maxLength: 2 }),
  }),
  fc.record({ role: fc.constant("tool" as const), callId, name: text, output: text, isError: fc.boolean() }),
);

// One model per Anthropic thinking shape: unknown (budget), Claude 4.6 and 4.7 (adaptive).
const MODELS = ["m-1", "claude-sonnet-4-6", "claude-opus-4-7"] as const;

describe("properties", () => {
  it("invents no text, never leaks the key, and pairs every call with its result", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 12 }), fc.constantFrom(...EFFORTS), fc.constantFrom(...MODELS), (messages, effort, model) => {
        const allowed = given(messages, [model, "adaptive", "summarized", READ_FILE.name, READ_FILE.description, "object", "string", "path"]);
        for (const api of APIS) {
          const built = buildRequest(endpoint(api), params({ messages, effort, model }));
          assert.ok(!built.body.includes(KEY));
          const sent = JSON.parse(built.body) as Record<string, unknown>;
          for (const value of leaves(sent)) assert.ok(allowed.has(value), `${api} invented ${JSON.stringify(value)}`);
          assertPaired(api, sent);
        }
      }),
      { numRuns: fuzzRuns(300, 3) },
    );
  });
});

describe("end to end through the fake provider", () => {
  let server: FakeProvider;
  before(async () => {
    server = await startFakeProvider();
  });
  after(async () => {
    await server.close();
  });

  const cases: [ProviderApi, string, (events: ProviderEvent[], next: Record<string, unknown>) => void][] = [
    ["anthropic-messages", "anthropic-messages/thinking-summarized-unicode.json", (events, next) => {
      const signature = events.find((e) => e.type === "reasoning_opaque");
      const turns = next.messages as { role: string; content: { type: string; signature?: string }[] }[];
      assert.equal(turns.at(-2)?.content[0]?.type, "thinking");
      assert.equal(turns.at(-2)?.content[0]?.signature, signature?.type === "reasoning_opaque" ? signature.data : "missing");
    }],
    ["openai-responses", "openai-responses/reasoning-item-then-function-call.json", (_events, next) => {
      const types = (next.input as { type?: string }[]).map((item) => item.type ?? "message");
      assert.deepEqual(types.slice(-4), ["reasoning", "function_call", "function_call_output", "message"]);
    }],
    ["openai-chat", "openai-chat/parallel-tool-calls-mixed-args.json", (_events, next) => {
      assert.deepEqual((next.messages as { role: string }[]).slice(-4).map((m) => m.role), ["assistant", "tool", "tool", "user"]);
    }],
  ];
  for (const [api, rel, checkNext] of cases) {
    it(`${api}: the server sees exactly the built request, and the reply replays`, async () => {
      const fixture = loadFixtures().find((f) => f.rel === rel);
      assert.ok(fixture);
      server.enqueue({ chunks: frameFixture(fixture) });
      const target = endpoint(api, `${server.url}/v1/`);
      const first = params({ messages: CONVERSATION.slice(0, 2) });
      const built = buildRequest(target, first);
      const response = await runtimeFetch(built.url, { method: "POST", headers: built.headers, body: built.body, signal: new AbortController().signal, redirect: "error" });
      assert.equal(response.status, 200);
      assert.ok(response.body);
      const events: ProviderEvent[] = [];
      for await (const event of decodeStream(api, response.body, { model: "m-1" })) events.push(event);
      assert.ok(events.some((e) => e.type === "finish") && !events.some((e) => e.type === "error"));

      const logged = server.log.at(-1)!;
      assert.equal(logged.method, "POST");
      assert.equal(`${server.url}${logged.url}`, built.url);
      assert.deepEqual(logged.body, JSON.parse(built.body));
      for (const [name, value] of Object.entries(built.headers)) assert.equal(logged.headers[name], value);
      assert.ok(!JSON.stringify(logged.body).includes(KEY) && !logged.url.includes(KEY));

      const assistant = assistantFromEvents(events);
      const results: ModelMessage[] = assistant.toolCalls.map((call) => ({ role: "tool", callId: call.id, name: call.name, output: "ok", isError: false }));
      const next = JSON.parse(buildRequest(target, { ...first, messages: [...first.messages, assistant, ...results, { role: "user", text: "go on" }] }).body);
      assertPaired(api, next);
      checkNext(events, next);
    });
  }
});
