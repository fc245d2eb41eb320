/**
 * Catalog test helpers: loopback `/models` servers speaking each real list
 * format, a server on the in-memory runtime whose HTTP client is the
 * production one of the runtime running the test (`nodeFetch` under Node,
 * `denoFetch` under Deno), and small request helpers.
 *
 * @module
 */

import assert from "node:assert/strict";
import { MemoryFileSystem } from "../../runtime/memory-fs.ts";
import type { Runtime } from "../../src/host/runtime.ts";
import { encodeCache, endpointFingerprint } from "../../src/catalog/cache-format.ts";
import { type FakeProvider, type LoggedRequest, type Script, startFakeProvider } from "./fake-provider.ts";
import { type Frame, initLine, type Run, startServer } from "./harness.ts";
import { request } from "./turns.ts";

/** The storage root and cwd of the memory runtime's defaults. */
export const HOME = "/home/user/.magi-code";
export const CWD = "/work/project";
/** Keys the servers' settings use; they must never appear in any output frame. */
export const OPENAI_KEY = "sk-test-openai-0123456789abcdef";
export const ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef";

/** Every capability a catalog client uses, negotiated extensions included. */
export const CATALOG_CAPABILITIES = [
  "status",
  "shutdown",
  "session.create",
  "session.open",
  "history.page",
  "turn.start",
  "model.catalog",
  "selection.set",
  "model.catalog.status",
  "model.refresh",
];

const isDeno = "Deno" in globalThis;

/** The production HTTP client of the runtime this test runs on. */
export async function hostFetch(): Promise<Runtime["fetch"]> {
  if (isDeno) {
    // A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
    const path = "../../runtime/deno-http.ts";
    return ((await import(path)) as { denoFetch: Runtime["fetch"] }).denoFetch;
  }
  return (await import("../../runtime/node-http.ts")).nodeFetch;
}

/** A listed model as a test describes it. */
export interface ListedModel {
  readonly id: string;
  readonly name?: string;
  /** OpenRouter-style `supported_parameters`. */
  readonly parameters?: readonly string[];
}

/** The OpenAI list body (also what Ollama, vLLM and LM Studio serve). */
export function openAiList(models: readonly ListedModel[]): Script {
  return {
    body: {
      object: "list",
      data: models.map((model) => ({
        id: model.id,
        object: "model",
        created: 1_700_000_000,
        owned_by: "library",
        ...(model.name === undefined ? {} : { name: model.name }),
        ...(model.parameters === undefined ? {} : { supported_parameters: model.parameters, description: "secret-ish prose", pricing: { prompt: "0.000001" } }),
      })),
    },
  };
}

/** A handler answering Anthropic's paginated `/models` in pages of `size`. */
export function anthropicPages(models: readonly ListedModel[], size: number): (request: LoggedRequest) => Script {
  return (request) => {
    const url = new URL(request.url, "http://x");
    const after = url.searchParams.get("after_id");
    const start = after === null ? 0 : models.findIndex((model) => model.id === after) + 1;
    const page = models.slice(start, start + size);
    return {
      body: {
        data: page.map((model) => ({ type: "model", id: model.id, display_name: model.name ?? model.id, created_at: "2025-05-14T00:00:00Z" })),
        has_more: start + size < models.length,
        first_id: page[0]?.id ?? null,
        last_id: page.at(-1)?.id ?? null,
      },
    };
  };
}

/** A catalog server: the memory runtime, its fs, the fake provider(s) behind it. */
export interface CatalogServer extends Run {
  readonly provider: FakeProvider;
  readonly fs: MemoryFileSystem;
}

/** Options of {@link startCatalogServer}. */
export interface CatalogServerOptions {
  /** Top-level settings; `providers.endpoints` default to every built-in pointing at `provider`. */
  readonly settings?: Record<string, unknown>;
  readonly env?: Record<string, string>;
  readonly fs?: MemoryFileSystem;
  readonly provider?: FakeProvider;
  readonly capabilities?: readonly string[];
}

/** Settings pointing all three built-ins at `provider`, plus `extra`. */
export function builtinsAt(provider: FakeProvider, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const url = `${provider.url}/v1`;
  const { providers, ...rest } = extra as { providers?: Record<string, unknown> };
  return {
    model: { provider: "ollama", model: "qwen" },
    // Titles off unless `extra` sets `agent`: a titling request would reach this same fake provider.
    agent: { titles: { enabled: false } },
    ...rest,
    providers: {
      endpoints: { ollama: { base_url: url }, openai: { base_url: url }, anthropic: { base_url: url } },
      ...providers,
    },
  };
}

/** Starts a server on the memory runtime and initializes it with the catalog capabilities. */
export async function startCatalogServer(options: CatalogServerOptions = {}): Promise<CatalogServer> {
  const provider = options.provider ?? (await startFakeProvider());
  const fs = options.fs ?? new MemoryFileSystem();
  fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(options.settings ?? builtinsAt(provider)), 0o600);
  const env = { HOME: "/home/user", OPENAI_API_KEY: OPENAI_KEY, ANTHROPIC_API_KEY: ANTHROPIC_KEY, ...options.env };
  const run = startServer({ fs, env, fetch: await hostFetch() });
  const capabilities = [...(options.capabilities ?? CATALOG_CAPABILITIES)];
  const init = await request(run, "init", "initialize", { required_capabilities: capabilities }, initLine);
  assert.ok(init.result, `initialize succeeded: ${JSON.stringify(init.error)}`);
  return { ...run, provider, fs };
}

let next = 0;

/** Sends `method` and waits for its response. */
export function call(run: Run, method: string, params: Record<string, unknown> = {}): Promise<Frame> {
  return request(run, `q${++next}`, method, params);
}

/** Sends `method`, asserts success and returns its result. */
export async function ok(run: Run, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const frame = await call(run, method, params);
  assert.ok(frame.result, `${method} succeeded: ${JSON.stringify(frame.error)}`);
  return frame.result;
}

/** Sends `method`, asserts failure and returns the code. */
export async function fails(run: Run, method: string, params: Record<string, unknown> = {}): Promise<string> {
  const frame = await call(run, method, params);
  assert.ok(frame.error, `${method} failed: ${JSON.stringify(frame.result)}`);
  return frame.error.code;
}

/** Every page of a fresh `model.catalog`, following cursors; returns the choices and the last page. */
export async function allChoices(run: Run, limit = 100): Promise<{ choices: Record<string, unknown>[]; revision: string; pages: number }> {
  let page = await ok(run, "model.catalog", { limit });
  const revision = page.revision as string;
  const choices = [...page.choices as Record<string, unknown>[]];
  let pages = 1;
  while (page.next_cursor !== null) {
    page = await ok(run, "model.catalog", { revision, cursor: page.next_cursor, limit });
    choices.push(...page.choices as Record<string, unknown>[]);
    pages++;
  }
  return { choices, revision, pages };
}

/** The status object's selection. */
export async function selectionOf(run: Run): Promise<Record<string, unknown>> {
  return (await ok(run, "status")).selection as Record<string, unknown>;
}

/** Whether any output frame so far carries `secret`. */
export function leaked(run: Run, secret: string): boolean {
  return run.frames().some((frame) => JSON.stringify(frame).includes(secret));
}

/** Ends input, waits for exit and closes the fake provider. */
export async function stopCatalogServer(server: CatalogServer, closeProvider = true): Promise<number> {
  server.runtime.input.end();
  const code = await server.exit;
  if (closeProvider) await server.provider.close();
  return code;
}

/** Writes `provider`'s cache as a refresh would have, for the endpoint at `url`. */
export async function seedCache(fs: MemoryFileSystem, provider: string, api: string, url: string, models: { id: string; name?: string | null; reasoning?: boolean | null }[], mode = 0o600) {
  const bytes = encodeCache({
    provider,
    endpoint: await endpointFingerprint(api, url),
    refreshedAt: "2026-12-01T10:00:00.000Z",
    models: models.map((model) => ({ id: model.id, name: model.name ?? null, reasoning: model.reasoning ?? null })),
  });
  fs.writeFile(`${HOME}/catalog/${provider}.json`, bytes, mode);
}

