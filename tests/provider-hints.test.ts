/**
 * Diagnostics a newcomer can act on: a provider that cannot be reached and
 * an HTTP 404 name the base URL that was tried (scheme, host, port and path
 * only, redacted), and the default Ollama says to start it or choose a
 * provider. Checked on the summaries themselves and through whole turns
 * against a loopback provider (a 404) and a closed loopback port.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BUILTIN_PROVIDERS, type Endpoint } from "../src/config/providers.ts";
import { DiagnosticCode } from "../src/protocol/errors.ts";
import { providerFailureSummary, shownBaseUrl } from "../src/runner/provider-hints.ts";
import { runEvents, startTurn, startTurnServer, stopTurnServer, terminalData } from "./support/turns.ts";

const custom: Endpoint = { name: "local", api: "openai-chat", baseUrl: "http://127.0.0.1:8000", apiKeyEnv: null, defaultModel: null };

describe("provider failure summaries", () => {
  it("the default Ollama, unreachable: start it or choose a provider, see docs/settings.md", () => {
    const text = providerFailureSummary(DiagnosticCode.providerUnreachable, null, BUILTIN_PROVIDERS.ollama, []);
    assert.equal(
      text,
      "Nothing answered at http://127.0.0.1:11434/v1, the default Ollama server. Start Ollama (ollama serve), or choose another provider in settings.jsonc; see docs/settings.md.",
    );
  });

  it("another endpoint, unreachable: names its base URL", () => {
    assert.match(providerFailureSummary(DiagnosticCode.providerUnreachable, null, custom, [])!, /could not be reached at http:\/\/127\.0\.0\.1:8000\. Check the base URL/);
  });

  it("HTTP 404: a likely wrong base URL; other refusals keep the fixed text", () => {
    assert.match(providerFailureSummary(DiagnosticCode.providerBadRequest, 404, custom, [])!, /HTTP 404 at http:\/\/127\.0\.0\.1:8000: the base URL is likely wrong \(.*\/v1\)/);
    assert.equal(providerFailureSummary(DiagnosticCode.providerBadRequest, 400, custom, []), null);
    assert.equal(providerFailureSummary(DiagnosticCode.providerAuth, 401, custom, []), null);
  });

  it("shows no user info, query or fragment, and redacts known secrets", () => {
    assert.equal(shownBaseUrl("https://user:pw@example.test:8443/v1?key=abc#x", []), "https://example.test:8443/v1");
    const secret = "sk-proj-0123456789abcdefghij";
    const shown = shownBaseUrl(`https://example.test/${secret}/v1`, [secret])!;
    assert.ok(!shown.includes(secret), shown);
    assert.equal(shownBaseUrl("not a url", []), null);
  });
});

describe("provider failure diagnostics in a turn", () => {
  it("HTTP 404 from the base URL says the base URL is likely wrong, naming it", async () => {
    const server = await startTurnServer("openai-chat");
    server.provider.enqueue({ status: 404, body: { error: "not found" } });
    const { runId } = await startTurn(server, "hello");
    const events = await runEvents(server, runId);
    const diagnostic = events.find((frame) => frame.event === "diagnostic")!.data as { code: string; summary: string };
    assert.equal(diagnostic.code, DiagnosticCode.providerBadRequest);
    assert.ok(diagnostic.summary.includes(`HTTP 404 at ${server.provider.url}/v1: the base URL is likely wrong`), diagnostic.summary);
    assert.equal(terminalData(events).outcome, "failed");
    assert.equal(await stopTurnServer(server), 0);
  });

  it("a closed port is provider_unreachable, naming the base URL", async () => {
    const server = await startTurnServer("openai-chat", { settings: { providers: { endpoints: { ollama: { base_url: "http://127.0.0.1:1/v1" } } } } });
    const { runId } = await startTurn(server, "hello");
    const events = await runEvents(server, runId);
    const diagnostic = events.find((frame) => frame.event === "diagnostic")!.data as { code: string; summary: string };
    assert.equal(diagnostic.code, DiagnosticCode.providerUnreachable);
    assert.match(diagnostic.summary, /could not be reached at http:\/\/127\.0\.0\.1:1\/v1\. Check the base URL and the network; see docs\/settings\.md\./);
    assert.equal(await stopTurnServer(server), 0);
  });
});
