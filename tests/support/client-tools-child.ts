/**
 * A child on the memory runtime whose client negotiated `client.tools` and
 * registered one tool that its settings allow, with `ollama/qwen` pointed at
 * a fake provider (OpenAI chat): the setup of the client-tool turn tests.
 *
 * @module
 */

import assert from "node:assert/strict";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import { type FakeProvider, type LoggedRequest, startFakeProvider } from "./fake-provider.ts";
import { type Run, startServer } from "./harness.ts";
import { runtimeFetch } from "./runtime-fetch.ts";
import { HOME, request, TURN_CAPABILITIES } from "./turns.ts";

/** The provider API the fake provider speaks here. */
export const API = "openai-chat";

/** One chat message of a logged provider request. */
export type ChatMessage = { role: string; content?: unknown };

/** The messages of a logged provider request. */
export const messagesOf = (logged: LoggedRequest): ChatMessage[] => (logged.body as { messages: ChatMessage[] }).messages;

/** A tool as `initialize`'s `client_tools` registers it. */
export interface RegisteredTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Record<string, unknown>;
  readonly timeout_ms?: number;
}

/** A ready child and its fake provider: end the child's input, then close the provider. */
export interface ClientToolsChild {
  readonly run: Run;
  readonly provider: FakeProvider;
}

/**
 * Starts a fake provider and a child whose settings allow `tool`
 * (`client_tools.<name>: "allow"`, titles off), and initializes it with the
 * turn capabilities, `client.tools` and `tool` registered. Should
 * `initialize` fail, both are stopped before the assertion throws.
 */
export async function clientToolsChild(tool: RegisteredTool): Promise<ClientToolsChild> {
  const provider = await startFakeProvider();
  const fs = new MemoryFileSystem();
  fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify({
    model: { provider: "ollama", model: "qwen" },
    providers: { endpoints: { ollama: { base_url: `${provider.url}/v1` } } },
    agent: { titles: { enabled: false } },
    client_tools: { [tool.name]: "allow" },
  }), 0o600);
  const run = startServer({ fetch: runtimeFetch, fs, env: { HOME: "/home/user" } });
  const init = await request(run, "init", "initialize", { required_capabilities: [...TURN_CAPABILITIES, "client.tools"], client_tools: [tool] });
  if (init.result === undefined) {
    run.runtime.input.end();
    await provider.close();
  }
  assert.ok(init.result, JSON.stringify(init.error));
  return { run, provider };
}
