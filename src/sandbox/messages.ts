/**
 * The messages the child and its sandbox host exchange, one per frame
 * (`frames.ts`), and their checks: each side validates every message it
 * reads, and anything else is a protocol fault that ends the program.
 *
 * @module
 */

/** The guest bounds the host enforces itself (the wall clock is the child's). */
export interface GuestLimits {
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly cpuMs: number;
  readonly maxCalls: number;
  readonly logBytes: number;
  readonly resultBytes: number;
}

/** Child → host, first and once: the program and the tool names it may call. */
export interface StartMessage {
  readonly type: "start";
  readonly source: string;
  readonly tools: readonly string[];
  readonly limits: GuestLimits;
}

/** Child → host: how nested call `id` ended; `output` is what the tool said (its error text when `ok` is false). */
export interface ResultMessage {
  readonly type: "result";
  readonly id: number;
  readonly ok: boolean;
  readonly output: string;
}

/** Host → child: the guest called `tools[name]` with `args`, the JSON text of its argument. */
export interface CallMessage {
  readonly type: "call";
  readonly id: number;
  readonly name: string;
  readonly args: string;
}

/**
 * Host → child: the guest has nothing to run until a call's result arrives
 * (the child's clock pauses). `results` counts the results the host had
 * received when it said so: a wait written before the latest result
 * arrived is stale, and the clock runs on.
 */
export interface WaitMessage {
  readonly type: "wait";
  readonly results: number;
}

/**
 * Host → child, last: the program returned (`text` is its value: a string
 * as is, anything else as JSON) or threw (`text` describes the error, the
 * CPU or memory bound included); `logs` is its bounded `console.log` output.
 */
export interface DoneMessage {
  readonly type: "done";
  readonly status: "returned" | "threw";
  readonly text: string;
  readonly logs: string;
}

/** Every message the host sends. */
export type HostMessage = CallMessage | WaitMessage | DoneMessage;

const isInt = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isString = (value: unknown): value is string => typeof value === "string";
const keysAre = (message: Record<string, unknown>, keys: readonly string[]) => {
  const own = Object.keys(message);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(message, key));
};

/** `message` as a {@link HostMessage}, or null when it is anything else. */
export function hostMessage(message: Record<string, unknown>): HostMessage | null {
  switch (message.type) {
    case "call":
      return keysAre(message, ["type", "id", "name", "args"]) && isInt(message.id) && isString(message.name) && isString(message.args)
        ? message as unknown as CallMessage
        : null;
    case "wait":
      return keysAre(message, ["type", "results"]) && isInt(message.results) ? message as unknown as WaitMessage : null;
    case "done":
      return keysAre(message, ["type", "status", "text", "logs"]) && (message.status === "returned" || message.status === "threw") &&
          isString(message.text) && isString(message.logs)
        ? message as unknown as DoneMessage
        : null;
    default:
      return null;
  }
}

const LIMIT_KEYS = ["memoryBytes", "stackBytes", "cpuMs", "maxCalls", "logBytes", "resultBytes"] as const;

/** `message` as a {@link StartMessage}, or null. */
export function startMessage(message: Record<string, unknown>): StartMessage | null {
  if (message.type !== "start" || !keysAre(message, ["type", "source", "tools", "limits"]) || !isString(message.source)) return null;
  const { tools, limits } = message;
  if (!Array.isArray(tools) || !tools.every(isString)) return null;
  if (typeof limits !== "object" || limits === null || !keysAre(limits as Record<string, unknown>, LIMIT_KEYS)) return null;
  if (!LIMIT_KEYS.every((key) => isInt((limits as Record<string, unknown>)[key]))) return null;
  return message as unknown as StartMessage;
}

/** `message` as a {@link ResultMessage}, or null. */
export function resultMessage(message: Record<string, unknown>): ResultMessage | null {
  return message.type === "result" && keysAre(message, ["type", "id", "ok", "output"]) && isInt(message.id) &&
      typeof message.ok === "boolean" && isString(message.output)
    ? message as unknown as ResultMessage
    : null;
}
