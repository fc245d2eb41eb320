import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { effectiveEffort, effortPolicy } from "../src/policy/effort-policy.ts";
import { EFFORTS, type Effort } from "../src/policy/efforts.ts";
import { buildRequest } from "../src/runner/providers/request.ts";
import type { ProviderApi } from "../src/config/settings.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

type Row = [api: ProviderApi, model: string, support: string, permitted: Effort[]];

const ROWS: Row[] = [
  ["openai-responses", "gpt-5-mini", "supported", ["default", "low", "medium", "high"]],
  ["openai-responses", "gpt-5.1", "supported", ["default", "low", "medium", "high"]],
  ["openai-responses", "gpt-5.2", "supported", ["default", "low", "medium", "high", "xhigh"]],
  ["openai-responses", "gpt-5.1-codex-max", "supported", ["default", "low", "medium", "high", "xhigh"]],
  ["openai-chat", "gpt-5.2", "supported", ["default", "low", "medium", "high"]],
  ["openai-responses", "o3-mini", "supported", ["default", "low", "medium", "high"]],
  ["openai-responses", "o1-mini", "unsupported", ["default"]],
  ["openai-responses", "gpt-5-chat-latest", "unsupported", ["default"]],
  ["openai-responses", "gpt-4.1", "unsupported", ["default"]],
  ["openai-chat", "gpt-oss:20b", "supported", ["default", "low", "medium", "high"]],
  ["openai-chat", "openai/gpt-oss-120b", "supported", ["default", "low", "medium", "high"]],
  ["openai-chat", "qwen2.5-coder:7b", "unknown", ["default"]],
  ["openai-responses", "gpt-6", "unknown", ["default"]],
  ["anthropic-messages", "claude-3-5-haiku-latest", "unsupported", ["default"]],
  ["anthropic-messages", "claude-3-7-sonnet-latest", "supported", ["default", "low", "medium", "high", "xhigh"]],
  ["anthropic-messages", "claude-opus-4-1", "supported", ["default", "low", "medium"]],
  ["anthropic-messages", "claude-sonnet-4-5", "supported", ["default", "low", "medium", "high", "xhigh"]],
  ["anthropic-messages", "claude-haiku-4-5", "supported", ["default", "low", "medium", "high", "xhigh"]],
  ["anthropic-messages", "claude-opus-4-6", "supported", ["default", "low", "medium", "high", "max"]],
  ["anthropic-messages", "claude-sonnet-4-6", "supported", ["default", "low", "medium", "high"]],
  ["anthropic-messages", "claude-opus-4-7", "supported", ["default", "low", "medium", "high", "xhigh", "max"]],
  ["anthropic-messages", "claude-sonnet-5", "supported", ["default", "low", "medium", "high", "xhigh", "max"]],
  ["anthropic-messages", "claude-mythos-preview", "unknown", ["default"]],
  ["anthropic-messages", "gpt-5", "unknown", ["default"]],
];

/** What a request for `effort` says about reasoning: the part of the body the effort decides. */
function sent(api: ProviderApi, model: string, effort: Effort): string {
  const endpoint = { name: "p", api, baseUrl: "http://127.0.0.1:1/v1", apiKeyEnv: null, defaultModel: null };
  const body = JSON.parse(buildRequest(endpoint, { model, effort, messages: [], tools: [], apiKey: null, maxOutputTokens: 16_384 }).body);
  return JSON.stringify([body.reasoning, body.reasoning_effort, body.thinking, body.output_config, body.max_tokens]);
}

describe("effort policy table", () => {
  for (const [api, model, support, permitted] of ROWS) {
    it(`${api} ${model}: ${support} ${permitted.join(",")}`, () => {
      assert.deepEqual(effortPolicy(api, model, null), { support, permitted });
    });
  }

  it("every permitted effort is sent as itself: no two permitted efforts produce the same request", () => {
    for (const [api, model] of ROWS) {
      const { permitted } = effortPolicy(api, model, null);
      const bodies = permitted.map((effort) => sent(api, model, effort));
      assert.equal(new Set(bodies).size, bodies.length, `${api} ${model}`);
    }
  });

  it("Anthropic budgets of permitted efforts stay within the model's output limit", () => {
    const limits: [string, number][] = [["claude-opus-4-1", 32_000], ["claude-sonnet-4-5", 64_000], ["claude-sonnet-4-6", 64_000]];
    for (const [model, limit] of limits) {
      for (const effort of effortPolicy("anthropic-messages", model, null).permitted) {
        const maxTokens = JSON.parse(sent("anthropic-messages", model, effort))[4] as number;
        assert.ok(maxTokens <= limit, `${model} ${effort}: ${maxTokens}`);
      }
    }
  });

  it("a cached reasoning hint decides only chat models the table does not know", () => {
    assert.deepEqual(effortPolicy("openai-chat", "deepseek/deepseek-r1", true), { support: "supported", permitted: ["default", "low", "medium", "high"] });
    assert.deepEqual(effortPolicy("openai-chat", "deepseek/deepseek-r1", false), { support: "unsupported", permitted: ["default"] });
    assert.deepEqual(effortPolicy("openai-chat", "gpt-4o", true), { support: "unsupported", permitted: ["default"] });
    assert.deepEqual(effortPolicy("openai-responses", "mystery", true), { support: "unknown", permitted: ["default"] });
  });

  it("property: default is always permitted, unknown and unsupported permit only default, effective agrees with support", () => {
    const model = fc.oneof(fc.constantFrom(...ROWS.map((row) => row[1])), fc.string({ maxLength: 40 }));
    const api = fc.constantFrom<ProviderApi>("openai-chat", "openai-responses", "anthropic-messages");
    fc.assert(
      fc.property(api, model, fc.constantFrom(true, false, null), fc.constantFrom(...EFFORTS), (a, m, hint, requested) => {
        const policy = effortPolicy(a, m, hint);
        assert.equal(policy.permitted[0], "default");
        if (policy.support !== "supported") assert.deepEqual(policy.permitted, ["default"]);
        const effective = effectiveEffort(policy, requested);
        if (policy.support !== "supported") assert.equal(effective, null);
        else assert.equal(effective, policy.permitted.includes(requested) ? requested : "default");
      }),
      { numRuns: fuzzRuns(500) },
    );
  });
});
