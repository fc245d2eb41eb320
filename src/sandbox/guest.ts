/**
 * The guest: one program in a QuickJS context compiled to WebAssembly, with
 * nothing in it but the language, a bounded `console.log` and a frozen
 * `tools` object whose functions ask the host's child for each call. QuickJS
 * has no filesystem, network, process, module loader, timers or
 * WebAssembly of its own, and none is added. The heap and stack are capped
 * by QuickJS; CPU time is counted only while the guest runs, so it pauses
 * while the program waits on a tool. Runs inside the sandbox host process
 * (`host.ts`), never in the child.
 *
 * @module
 */

import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle } from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import { clampUtf8, utf8ByteCount } from "../util/utf8.ts";
import type { CallMessage, DoneMessage, GuestLimits, ResultMessage } from "./messages.ts";

// Runs once in the fresh context, before the program: it keeps the host's call function in a
// closure, so the program can reach the host only through the frozen `tools` functions.
const PRELUDE = `(function (call, log, names, source) {
  const stringify = JSON.stringify;
  const show = (value) => {
    if (typeof value === "string") return value;
    try { const text = stringify(value); return text === undefined ? String(value) : text; } catch { return String(value); }
  };
  const tools = Object.create(null);
  for (const name of JSON.parse(names)) {
    tools[name] = Object.freeze(async function (args) { return await call(name, stringify(args === undefined ? {} : args)); });
  }
  Object.defineProperty(globalThis, "tools", { value: Object.freeze(tools) });
  const console = Object.create(null);
  console.log = Object.freeze((...values) => { log(values.map(show).join(" ")); });
  Object.defineProperty(globalThis, "console", { value: Object.freeze(console) });
  const body = new (Object.getPrototypeOf(async function () {}).constructor)(source);
  return (async () => { const value = await body(); return value === undefined ? undefined : show(value); })();
})`;

const OUT_OF_MEMORY = /out of memory/i;

/** The program in its context, from start to its one {@link DoneMessage}. */
export class Guest {
  readonly #vm: QuickJSContext;
  readonly #limits: GuestLimits;
  readonly #now: () => number;
  readonly #outbox: CallMessage[] = [];
  readonly #pending = new Map<number, QuickJSDeferredPromise>();
  #logs = "";
  #logBytes = 0;
  #dropped = 0;
  #calls = 0;
  #cpuUsed = 0;
  #runningSince: number | null = null;
  #interrupted = false;
  #program: QuickJSHandle | null = null;

  private constructor(vm: QuickJSContext, limits: GuestLimits, now: () => number) {
    this.#vm = vm;
    this.#limits = limits;
    this.#now = now;
  }

  /** A fresh context under `limits`; `now` is a monotonic clock in milliseconds. */
  static async create(limits: GuestLimits, now: () => number): Promise<Guest> {
    const quickjs = await newQuickJSWASMModuleFromVariant(variant);
    const runtime = quickjs.newRuntime();
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(limits.stackBytes);
    const guest = new Guest(runtime.newContext(), limits, now);
    runtime.setInterruptHandler(() => guest.#overBudget());
    return guest;
  }

  /** The calls the program made since the last take, in order. */
  takeCalls(): CallMessage[] {
    return this.#outbox.splice(0);
  }

  /** Starts `source` with `tools` callable; the program's end, or null while it waits on a call. */
  start(source: string, tools: readonly string[]): DoneMessage | null {
    const vm = this.#vm;
    const call = vm.newFunction("call", (name, args) => this.#call(vm.getString(name), vm.getString(args)));
    const log = vm.newFunction("log", (text) => {
      this.#log(vm.getString(text));
    });
    const names = vm.newString(JSON.stringify(tools));
    const text = vm.newString(source);
    const started = this.#running(() => {
      const prelude = vm.evalCode(PRELUDE, "prelude.js");
      if (prelude.error !== undefined) return prelude;
      const result = vm.callFunction(prelude.value, vm.undefined, call, log, names, text);
      prelude.value.dispose();
      return result;
    });
    for (const handle of [call, log, names, text]) handle.dispose();
    if (started.error !== undefined) return this.#done("threw", this.#describe(started.error));
    this.#program = started.value;
    return this.run();
  }

  /** Settles call `result.id` inside the guest and runs on; false when no such call is pending. */
  settle(result: ResultMessage): boolean {
    const deferred = this.#pending.get(result.id);
    if (deferred === undefined) return false;
    this.#pending.delete(result.id);
    const value = result.ok ? this.#vm.newString(result.output) : this.#vm.newError(result.output);
    // The promise's handle was the host function's return value, which QuickJS owns: only the value is ours to free.
    if (result.ok) deferred.resolve(value);
    else deferred.reject(value);
    value.dispose();
    return true;
  }

  /** Runs every job the guest has; its end, or null while it waits on a call. */
  run(): DoneMessage | null {
    const vm = this.#vm;
    const jobs = this.#running(() => vm.runtime.executePendingJobs());
    if (jobs.error !== undefined) return this.#done("threw", this.#describe(jobs.error));
    const state = vm.getPromiseState(this.#program!);
    if (state.type === "fulfilled") {
      const value = state.value;
      const text = vm.typeof(value) === "string" ? vm.getString(value) : "";
      value.dispose();
      return this.#done("returned", clampUtf8(text, this.#limits.resultBytes));
    }
    if (state.type === "rejected") return this.#done("threw", this.#describe(state.error));
    if (this.#pending.size === 0 && this.#outbox.length === 0) {
      return this.#done("threw", "The program awaited something that can never settle (there are no timers, and no tool call is pending).");
    }
    return null;
  }

  #call(name: string, args: string): QuickJSHandle {
    const vm = this.#vm;
    const deferred = vm.newPromise();
    if (this.#calls >= this.#limits.maxCalls) {
      const error = vm.newError(`A program may make at most ${this.#limits.maxCalls} tool calls.`);
      deferred.reject(error);
      error.dispose();
      return deferred.handle;
    }
    this.#calls += 1;
    const id = this.#calls;
    this.#pending.set(id, deferred);
    this.#outbox.push({ type: "call", id, name, args });
    return deferred.handle;
  }

  #log(text: string): void {
    const line = `${text}\n`;
    const bytes = this.#dropped === 0 ? utf8ByteCount(line) : Infinity;
    if (this.#logBytes + bytes <= this.#limits.logBytes) {
      this.#logs += line;
      this.#logBytes += bytes;
    } else this.#dropped += line.length;
  }

  #running<T>(work: () => T): T {
    this.#runningSince = this.#now();
    try {
      return work();
    } finally {
      this.#cpuUsed += this.#now() - this.#runningSince;
      this.#runningSince = null;
    }
  }

  #overBudget(): boolean {
    if (this.#runningSince !== null && this.#cpuUsed + (this.#now() - this.#runningSince) > this.#limits.cpuMs) this.#interrupted = true;
    return this.#interrupted;
  }

  #describe(error: QuickJSHandle): string {
    const dumped: unknown = this.#vm.dump(error);
    error.dispose();
    if (this.#interrupted) return `The program used more than its ${this.#limits.cpuMs} ms of CPU time and was stopped.`;
    const text = typeof dumped === "object" && dumped !== null && "message" in dumped
      ? `${String((dumped as { name?: unknown }).name ?? "Error")}: ${String(dumped.message)}`
      : `Uncaught ${typeof dumped === "string" ? dumped : JSON.stringify(dumped) ?? String(dumped)}`;
    if (OUT_OF_MEMORY.test(text)) return `The program ran out of memory (its heap is ${this.#limits.memoryBytes} bytes).`;
    return clampUtf8(text, this.#limits.resultBytes);
  }

  #done(status: DoneMessage["status"], text: string): DoneMessage {
    const logs = this.#dropped === 0 ? this.#logs : `${this.#logs}(${this.#dropped} more characters of console.log output were dropped)\n`;
    return { type: "done", status, text, logs };
  }
}
