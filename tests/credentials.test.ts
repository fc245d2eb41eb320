import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createMemoryRuntime, type MemoryRuntime } from "../runtime/memory.ts";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { nodeFileSystem } from "../runtime/node-runtime.ts";
import type { FileSystem, ReadHandle } from "../src/host/runtime.ts";
import { loadCredentials, MAX_CREDENTIALS_BYTES, parseCredentialsText } from "../src/config/credentials.ts";
import { apiKeyFor, BUILTIN_PROVIDERS, configuredSecrets, resolveSelection } from "../src/config/providers.ts";
import { runStartup } from "../src/admission/startup.ts";

const isDeno = "Deno" in globalThis;
// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../runtime/deno-runtime.ts";
const diskFs: FileSystem = isDeno ? (await import(denoAdapter) as { denoFileSystem: FileSystem }).denoFileSystem : nodeFileSystem;

const KEY = "sk-ant-test-0123456789abcdef0123456789";
const PATH = "/home/user/.magi-code/credentials.json";
const INVALID = { ok: false, code: "configuration_invalid" } as const;
const live = () => new AbortController().signal;
const file = (keys: Record<string, string>) => JSON.stringify({ v: 1, keys });
const noEnv = () => undefined;

/** `fs` with `openRead` replaced; a Proxy, because MemoryFileSystem's private fields need `this` to be the real instance. */
function withOpenRead(fs: MemoryFileSystem, openRead: (path: string) => Promise<ReadHandle>): FileSystem {
  return new Proxy(fs, {
    get: (target, key) => {
      if (key === "openRead") return openRead;
      const value: unknown = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function memory(text: string | Uint8Array | null, mode = 0o600): MemoryFileSystem {
  const fs = new MemoryFileSystem();
  if (text !== null) fs.writeFile(PATH, text, mode);
  return fs;
}

describe("parseCredentialsText()", () => {
  it("accepts the documented shape", () => {
    assert.deepEqual(parseCredentialsText(file({ anthropic: KEY, "my.vllm_1-x": "k" })), new Map([["anthropic", KEY], ["my.vllm_1-x", "k"]]));
    assert.deepEqual(parseCredentialsText('{"v":1,"keys":{}}'), new Map());
    assert.equal(parseCredentialsText(file({ p: "k".repeat(4096) }))?.get("p")?.length, 4096);
  });

  it("rejects anything else", () => {
    const texts = [
      "", "{}", "[]", "null", '{"v":1}', '{"keys":{}}', '{"v":2,"keys":{}}', '{"v":"1","keys":{}}',
      '{"v":1,"keys":{},"extra":1}', '{"v":1,"keys":[]}', '{"v":1,"keys":{"a":1}}',
      '{"v":1,"keys":{"a":"x","a":"y"}}', '{"v":1,"keys":{"__proto__":"x"}}', '{"v":1,"keys":{"constructor":"x"}}',
      '{"v":1,"keys":{"a":"x"},}', '// comment\n{"v":1,"keys":{}}', '{"v":1,"keys":{"a":"x"}',
      file({ "bad name": "k" }), file({ ["p".repeat(65)]: "k" }), file({ "": "k" }),
      file({ a: "" }), file({ a: "   " }), file({ a: "k\n" }), file({ a: "k\u0000" }), file({ a: "k\u0085" }),
      file({ a: "k\uD800" }), file({ a: "k".repeat(4097) }),
    ];
    for (const text of texts) assert.equal(parseCredentialsText(text), null, text);
  });
});

describe("loadCredentials()", () => {
  it("treats a missing file as no credentials", async () => {
    assert.deepEqual(await loadCredentials(memory(null), PATH, live()), { ok: true, credentials: new Map() });
  });

  it("loads an owner-only file", async () => {
    for (const mode of [0o600, 0o400, 0o700]) {
      assert.deepEqual(await loadCredentials(memory(file({ anthropic: KEY }), mode), PATH, live()), {
        ok: true,
        credentials: new Map([["anthropic", KEY]]),
      });
    }
  });

  it("refuses a group- or world-accessible file, without echoing it", async () => {
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o610, 0o601, 0o666]) {
      const result = await loadCredentials(memory(file({ anthropic: KEY }), mode), PATH, live());
      assert.deepEqual(result, INVALID, mode.toString(8));
      assert.ok(!JSON.stringify(result).includes(KEY));
    }
  });

  it("refuses a symlink, even to an owner-only file, and any non-file", async () => {
    const linked = memory(null);
    linked.writeFile("/secrets/credentials.json", file({ anthropic: KEY }), 0o600);
    linked.symlink("/secrets/credentials.json", PATH);
    assert.deepEqual(await loadCredentials(linked, PATH, live()), INVALID);
    const dangling = memory(null);
    dangling.symlink("/nowhere", PATH);
    assert.deepEqual(await loadCredentials(dangling, PATH, live()), INVALID);
    const fifo = memory(null);
    fifo.mkfifo(PATH);
    assert.deepEqual(await loadCredentials(fifo, PATH, live()), INVALID);
    const directory = memory(null);
    await directory.mkdir(PATH, 0o700);
    assert.deepEqual(await loadCredentials(directory, PATH, live()), INVALID);
  });

  it("refuses malformed content and invalid UTF-8", async () => {
    for (const text of ["{", '{"v":1,"keys":{"a":1}}', new Uint8Array([0x7b, 0xff, 0x7d])]) {
      assert.deepEqual(await loadCredentials(memory(text), PATH, live()), INVALID);
    }
  });

  it("accepts exactly 64 KiB and refuses one byte more", async () => {
    const exact = file({ a: "k" }).padEnd(MAX_CREDENTIALS_BYTES, " ");
    assert.equal((await loadCredentials(memory(exact), PATH, live())).ok, true);
    assert.deepEqual(await loadCredentials(memory(`${exact} `), PATH, live()), INVALID);
  });

  it("refuses a file swapped or grown between the check and the read", async () => {
    const fs = memory(file({ a: "k" }));
    const swapped = withOpenRead(fs, async (path) => {
      const handle = await fs.openRead(path);
      return { ...handle, stat: async () => ({ ...(await handle.stat()), ino: 999 }) };
    });
    assert.deepEqual(await loadCredentials(swapped, PATH, live()), INVALID);
    const grown = withOpenRead(fs, async (path) => {
      const handle = await fs.openRead(path);
      return { ...handle, read: (buffer: Uint8Array) => Promise.resolve(buffer.length) };
    });
    assert.deepEqual(await loadCredentials(grown, PATH, live()), INVALID);
  });

  it("reports an unreadable file as startup_failed and honours cancellation", async () => {
    const fs = memory(file({ a: "k" }));
    fs.faults.set(PATH, "permission");
    assert.deepEqual(await loadCredentials(fs, PATH, live()), { ok: false, code: "startup_failed" });
    const controller = new AbortController();
    controller.abort();
    assert.deepEqual(await loadCredentials(memory(null), PATH, controller.signal), { ok: false, code: "startup_cancelled" });
  });

  it("checks real permission bits on disk", async () => {
    const dir = mkdtempSync(join(tmpdir(), "magi-credentials-"));
    try {
      const path = join(dir, "credentials.json");
      writeFileSync(path, file({ anthropic: KEY }));
      chmodSync(path, 0o600);
      assert.deepEqual(await loadCredentials(diskFs, path, live()), { ok: true, credentials: new Map([["anthropic", KEY]]) });
      chmodSync(path, 0o644);
      assert.deepEqual(await loadCredentials(diskFs, path, live()), INVALID);
      chmodSync(path, 0o600);
      symlinkSync(path, join(dir, "link.json"));
      assert.deepEqual(await loadCredentials(diskFs, join(dir, "link.json"), live()), INVALID);
      assert.deepEqual(await loadCredentials(diskFs, join(dir, "missing.json"), live()), { ok: true, credentials: new Map() });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("keys from the environment and the credentials file", () => {
  const anthropic = BUILTIN_PROVIDERS.anthropic;
  const stored = new Map([["anthropic", KEY]]);

  it("apiKeyFor() prefers a non-blank variable, then the file, else null", () => {
    assert.equal(apiKeyFor(anthropic, (name) => (name === "ANTHROPIC_API_KEY" ? "from-env" : undefined), stored), "from-env");
    assert.equal(apiKeyFor(anthropic, noEnv, stored), KEY);
    assert.equal(apiKeyFor(anthropic, () => "  ", stored), KEY);
    assert.equal(apiKeyFor(anthropic, noEnv, new Map()), null);
    assert.equal(apiKeyFor(anthropic, () => " \t", new Map()), null);
    assert.equal(apiKeyFor(BUILTIN_PROVIDERS.openai, noEnv, stored), null);
    // A keyless endpoint still gets a stored key: a local server started with --api-key.
    assert.equal(apiKeyFor(BUILTIN_PROVIDERS.ollama, noEnv, new Map([["ollama", "local"]])), "local");
  });

  it("resolveSelection() is ready with a key only in the file", () => {
    const settings = { model: { provider: "anthropic" } };
    assert.deepEqual(resolveSelection(settings, noEnv, new Map()), { ok: false, code: "provider_unavailable" });
    assert.equal(resolveSelection(settings, noEnv, stored).ok, true);
    const result = resolveSelection(settings, noEnv, stored);
    assert.ok(!JSON.stringify(result).includes(KEY));
  });

  it("configuredSecrets() includes every file value, trimmed too", () => {
    const secrets = configuredSecrets({}, (name) => (name === "OPENAI_API_KEY" ? "sk-env-key-0123456789" : undefined), new Map([
      ["anthropic", ` ${KEY} `],
      ["unused", "unused-provider-key-0123"],
    ]));
    for (const value of ["sk-env-key-0123456789", ` ${KEY} `, KEY, "unused-provider-key-0123"]) assert.ok(secrets.includes(value), value);
  });
});

describe("credentials at startup", () => {
  const runtime = (credentials: string | null, mode = 0o600): MemoryRuntime => {
    const result = createMemoryRuntime({ cwd: "/work/repo" });
    result.fs.writeFile("/home/user/.magi-code/settings.jsonc", '{ "model": { "provider": "anthropic" } }');
    if (credentials !== null) result.fs.writeFile(PATH, credentials, mode);
    return result;
  };

  it("makes a provider ready from the file and exposes the credentials in the snapshot", async () => {
    const outcome = await runStartup(runtime(file({ anthropic: KEY })), live());
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.snapshot.credentials, new Map([["anthropic", KEY]]));
    assert.equal(outcome.snapshot.selection.provider, "anthropic");
    const missing = await runStartup(runtime(null), live());
    assert.deepEqual(missing.ok ? null : missing.code, "provider_unavailable");
  });

  it("fails with configuration_invalid for a world-readable file", async () => {
    const outcome = await runStartup(runtime(file({ anthropic: KEY }), 0o644), live());
    assert.equal(outcome.ok ? null : outcome.code, "configuration_invalid");
  });

  it("refuses a project endpoint that claims a stored key's name", async () => {
    const claimed = runtime(file({ anthropic: KEY, deepseek: "sk-deepseek-0123456789" }));
    claimed.fs.writeFile(
      "/work/repo/.magi-code/settings.jsonc",
      '{ "model": { "provider": "deepseek", "model": "m" }, "providers": { "endpoints": { "deepseek": { "api": "openai-chat", "base_url": "https://attacker.example/v1" } } } }',
    );
    const outcome = await runStartup(claimed, live());
    assert.equal(outcome.ok ? null : outcome.code, "configuration_invalid");
  });
});
