/**
 * A protocol client for end-to-end turn tests: spawns a real entry point
 * (see {@link launchers}) over real pipes, parses every stdout line into a
 * frame, and lets a test send requests, wait for responses or events, and
 * settle a run. Also the temp `MC_HOME` and workspace such tests need, with
 * settings that point the keyless `ollama` provider at a loopback fake.
 *
 * Waits are bounded by generous limits only so that a broken build fails
 * with a description instead of hanging the suite; no test asserts timing.
 *
 * @module
 */

import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { paramsFrameBytes } from "../../src/fuzz/mod.ts";
import type { FakeProvider } from "./fake-provider.ts";
import { guarded } from "./hang-guard.ts";
import { collect, type Launcher, reap, type Spawned, spawnDirect } from "./processes.ts";

export { guarded };

/** One parsed output frame. */
export interface WireFrame {
  readonly protocol: string;
  readonly version: number;
  readonly type: "response" | "event";
  readonly instance_id: string;
  readonly seq: number;
  readonly id?: string | null;
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: string };
  readonly event?: string;
  readonly data?: Record<string, unknown>;
}

/** A temp workspace and storage root whose settings select `ollama` at `provider`. */
export interface Workspace {
  /** Canonical workspace directory (the child's cwd). */
  readonly cwd: string;
  /** The storage root (`MC_HOME`). */
  readonly home: string;
  /** Environment for a child: the test's own plus `MC_HOME`. */
  readonly env: NodeJS.ProcessEnv;
}

/** Creates `<root>/<name>-cwd` and `<root>/<name>-home` with settings for the fake `provider`. */
export function workspace(root: string, name: string, provider: FakeProvider, settings: Record<string, unknown> = {}): Workspace {
  const cwd = realpathSync(mkdtempSync(join(root, `${name}-cwd-`)));
  const home = join(root, `${name}-home`);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileSync(
    join(home, "settings.jsonc"),
    `// e2e: the keyless ollama provider, redirected to a loopback fake\n${
      JSON.stringify({
        model: { provider: "ollama", model: "qwen" },
        providers: { endpoints: { ollama: { base_url: `${provider.url}/v1` } } },
        ...settings,
        // Off unless a test turns them on: a title request would take a script meant for a next turn.
        agent: { titles: { enabled: false }, ...(settings.agent as Record<string, unknown> | undefined) },
      }, null, 2)
    }\n`,
    { mode: 0o600 },
  );
  // Loopback only: a proxy in the developer's environment must not see (or break) provider traffic.
  const env: NodeJS.ProcessEnv = { ...process.env, MC_HOME: home, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" };
  // Real keys in the developer's environment would become redaction secrets, and the stream redactor holds
  // back as many characters as the longest one: tests that wait for a delta must not depend on them.
  delete env.OPENAI_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  return { cwd, home, env };
}

/** A spawned magi-code and everything it wrote. */
export class WireClient {
  /** Every frame so far, in arrival order. */
  readonly frames: WireFrame[] = [];
  /** Every frame's line as written (without its LF), in arrival order: for byte-for-byte comparisons. */
  readonly lines: string[] = [];
  /** The child's stderr, once it closed. */
  readonly stderr: Promise<string>;
  /** The child's exit code. */
  readonly exited: Promise<number | null>;
  /** Resolves once stdout ended. */
  readonly stdoutEnded: Promise<void>;
  readonly #child: Spawned;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });
  readonly #watchers = new Set<() => void>();
  readonly #label: string;
  #buffer = "";
  #next = 0;
  #ended = false;

  /** Spawns `launcher` serving stdio in `cwd` with `env`. */
  constructor(launcher: Launcher, cwd: string, env: NodeJS.ProcessEnv) {
    this.#label = launcher.name;
    this.#child = spawnDirect(launcher, ["serve", "--stdio"], { cwd, env });
    this.#child.stdin.on("error", () => {});
    this.stderr = collect(this.#child.stderr);
    this.exited = this.#child.exited;
    this.stdoutEnded = new Promise((resolve) => {
      this.#child.stdout.on("data", (chunk: Uint8Array) => this.#feed(this.#decoder.decode(chunk, { stream: true })));
      const end = () => {
        if (this.#ended) return;
        this.#ended = true;
        this.#notify();
        resolve();
      };
      this.#child.stdout.on("end", end);
      this.#child.stdout.on("close", end);
      this.#child.stdout.on("error", end);
    });
  }

  #feed(text: string): void {
    this.#buffer += text;
    for (let lf = this.#buffer.indexOf("\n"); lf !== -1; lf = this.#buffer.indexOf("\n")) {
      this.lines.push(this.#buffer.slice(0, lf));
      this.frames.push(JSON.parse(this.lines.at(-1)!) as WireFrame);
      this.#buffer = this.#buffer.slice(lf + 1);
    }
    this.#notify();
  }

  #notify(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  /** Bytes of stdout after the last complete line (non-empty only for a torn frame). */
  get partial(): string {
    return this.#buffer;
  }

  /** Writes one request envelope (`id` defaults to the next `r<n>`); returns its id. */
  send(method: string, params: Record<string, unknown> = {}, id = `r${++this.#next}`): string {
    this.#child.stdin.write(`${JSON.stringify({ protocol: "magi-code.local-agent", version: 1, id, method, params })}\n`);
    return id;
  }

  /** Sends a request and resolves with its response frame. */
  call(method: string, params: Record<string, unknown> = {}): Promise<WireFrame> {
    const id = this.send(method, params);
    return this.waitFor((frame) => frame.type === "response" && frame.id === id, `${this.#label} response to ${method} (${id})`);
  }

  /** Sends `method` with params given as JSON text (the fuzz kit's invalid params, duplicate keys included) and resolves with its response. */
  callRaw(method: string, json: string): Promise<WireFrame> {
    const id = `r${++this.#next}`;
    this.#child.stdin.write(paramsFrameBytes(id, method, json));
    return this.waitFor((frame) => frame.type === "response" && frame.id === id, `${this.#label} response to ${method} (${id})`);
  }

  /** Sends a request that must succeed and resolves with its result. */
  async ok(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const frame = await this.call(method, params);
    if (frame.result === undefined) throw new Error(`${this.#label}: ${method} failed: ${JSON.stringify(frame.error)}`);
    return frame.result;
  }

  /** The first frame, past or future, that satisfies `predicate`; rejects if stdout ends first. */
  waitFor(predicate: (frame: WireFrame) => boolean, what: string): Promise<WireFrame> {
    const found = this.frames.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    let watcher!: () => void;
    const waiting = new Promise<WireFrame>((resolve, reject) => {
      let checked = this.frames.length;
      watcher = () => {
        for (; checked < this.frames.length; checked++) {
          if (predicate(this.frames[checked]!)) return resolve(this.frames[checked]!);
        }
        if (this.#ended) reject(new Error(`stdout ended before ${what}`));
      };
      this.#watchers.add(watcher);
      watcher();
    });
    return guarded(waiting, what).finally(() => this.#watchers.delete(watcher));
  }

  /** The first event `name` of `runId`. */
  event(runId: string, name: string): Promise<WireFrame> {
    return this.waitFor((frame) => frame.type === "event" && frame.event === name && frame.data?.run_id === runId, `${this.#label} ${name} of ${runId}`);
  }

  /** Every event of `runId` so far. */
  eventsOf(runId: string): WireFrame[] {
    return this.frames.filter((frame) => frame.type === "event" && frame.data?.run_id === runId);
  }

  /** Waits for `run.finished` of `runId`; returns every event of the run, in order. */
  async runEvents(runId: string): Promise<WireFrame[]> {
    await this.event(runId, "run.finished");
    return this.eventsOf(runId);
  }

  /** Closes the child's stdin (EOF). */
  closeInput(): void {
    this.#child.stdin.end();
  }

  /** Sends `shutdown`, closes stdin and resolves with the exit code once stdout ended too. */
  async shutdown(): Promise<{ code: number | null; response: WireFrame }> {
    const response = await this.call("shutdown");
    this.closeInput();
    const code = await guarded(this.exited, `${this.#label} exit after shutdown`);
    await guarded(this.stdoutEnded, `${this.#label} stdout end`);
    return { code, response };
  }

  /** The child's process id. */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Sends `signal` to the child itself (a crash, for SIGKILL: no cleanup runs); resolves with its exit code. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    this.#child.kill(signal);
    return await guarded(this.exited, `${this.#label} exit after ${signal}`);
  }

  /**
   * Cleanup after a failed test: closes both pipes so a still-running child
   * exits (EOF, then a broken stdout), and {@link reap}s one that does not,
   * so it cannot outlive the test and hold the file open. Await
   * {@link exited} to see it gone.
   */
  abandon(): void {
    if (!this.#child.done()) {
      this.#child.stdin.destroy();
      this.#child.stdout.destroy();
      // Not awaited, keeping the call synchronous for the finally blocks that make it; only SIGKILL failing rejects.
      void reap(this.#child);
    }
  }
}

/** The authoritative text of each reconciled message of `events`, by message id, in first-seen order. */
export function reconciledTexts(events: readonly WireFrame[]): { text: string; partial: boolean; complete: boolean }[] {
  const out = new Map<string, { text: string; partial: boolean; complete: boolean }>();
  for (const frame of events) {
    if (frame.event !== "message.reconcile") continue;
    const data = frame.data as { message_id: string; text: string; partial: boolean; last_part: boolean };
    const entry = out.get(data.message_id) ?? { text: "", partial: data.partial, complete: false };
    entry.text += data.text;
    entry.complete = data.last_part;
    out.set(data.message_id, entry);
  }
  return [...out.values()];
}

/** Concatenated deltas of each message, by message id, in first-seen order. */
export function streamedTexts(events: readonly WireFrame[]): string[] {
  const out = new Map<string, string>();
  for (const frame of events) {
    if (frame.event !== "message.delta") continue;
    const data = frame.data as { message_id: string; text: string };
    out.set(data.message_id, (out.get(data.message_id) ?? "") + data.text);
  }
  return [...out.values()];
}
