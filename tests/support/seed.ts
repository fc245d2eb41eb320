/**
 * Deterministic, realistic session histories for tests and benches: the core
 * of `scripts/seed-session.mjs` (which imports the compiled copy of this
 * file), usable on both runtimes against any {@link FileSystem}.
 *
 * Every record goes through {@link encodeRecord}, so a seeded file holds
 * exactly what the appender could have written; a record the schemas refuse
 * is a bug in this generator and throws.
 *
 * What a turn holds (see `docs/storage.md#records`): `turn_started`,
 * `user_input`, sometimes an `internal_prompt` context reminder, sometimes a
 * `reasoning_summary` (with `provider_summary: true`, occasionally replaced by
 * a later record with the same item id; or `false`/absent, which the
 * projection omits), sometimes a short preamble message, tool calls as
 * `activity` started/completed (or failed) pairs of `read_file`, `grep` and
 * `shell`, each usually followed by an `internal_prompt` holding the tool
 * output the provider replays, then the reply streamed as `assistant_chunk`s
 * followed by its reconciled `assistant_message`, `usage` and `turn_finished`.
 * Most turns complete; some fail or are cancelled and keep a partial reply.
 * Texts mix ASCII prose and code (quotes, backslashes, tabs, newlines) with
 * CJK, emoji (ZWJ sequences, skin tones, variation selectors) and combining
 * marks.
 *
 * Sizes are tuned for the worst case the bounds admit: a `targetBytes` of
 * 64 MiB fills the file to within a few KiB of 64 MiB in ~93,000 lines (the
 * read bound is 100,000), while the projection stays near 5 MiB and 6,200
 * parts (the snapshot bound is 8 MiB and 10,000 parts). A 64 MiB history can only be
 * opened at all if most of its bytes are never projected; here they are the
 * provider-replay tool outputs and the streamed chunks that the final
 * message supersedes, which is also where a long real session's bytes go.
 *
 * @module
 */

import { LIMITS } from "../../src/protocol/limits.ts";
import type { FileSystem } from "../../src/host/runtime.ts";
import { encodeRecord, type SessionRecord } from "../../src/store/records.ts";
import { concatBytes } from "../../src/util/bytes.ts";
import { joinPath } from "../../src/util/paths.ts";
import { uuid7 } from "../../src/util/uuid7.ts";

/** What to seed. */
export interface SeedOptions {
  /** The canonical absolute working directory recorded in the `session` record. */
  readonly cwd: string;
  /** Session id; by default a UUIDv7 derived from `seed`. */
  readonly sessionId?: string;
  /** PRNG seed (a 32-bit integer); the same options give the same bytes. Default 1. */
  readonly seed?: number;
  /** Fill with turns until the file is just under this many bytes (torn fragment included). */
  readonly targetBytes?: number;
  /** Exactly this many turns (when `targetBytes` is absent; default 20). */
  readonly turns?: number;
  /** Most LF-terminated lines (default `stored_history_lines`, 100,000). */
  readonly maxLines?: number;
  /** Append a partial record without its LF at the end, as a crash mid-append leaves it. */
  readonly torn?: boolean;
}

/** A generated history. */
export interface SeededSession {
  /** The session id in every record. */
  readonly sessionId: string;
  /** The file's bytes. */
  readonly bytes: Uint8Array;
  /** LF-terminated lines (a torn fragment is not a line). */
  readonly lines: number;
  /** Turns written (the torn fragment's turn is not counted). */
  readonly turns: number;
  /** Whether the file ends in a torn fragment. */
  readonly torn: boolean;
}

/** A history written to a filesystem. */
export interface SeedResult extends SeededSession {
  /** `<home>/sessions/<session id>.jsonl`. */
  readonly path: string;
  /** The canonical cwd recorded in the history. */
  readonly cwd: string;
}

/** Seeds `<home>/sessions/<id>.jsonl` (file 0600, created exclusively; directories 0700). */
export async function seedSession(fs: FileSystem, home: string, options: SeedOptions): Promise<SeedResult> {
  if (!options.cwd.startsWith("/")) throw new Error(`cwd must be absolute: ${options.cwd}`);
  const cwd = await fs.realpath(options.cwd);
  const seeded = generateSession({ ...options, cwd });
  const directory = joinPath(home, "sessions");
  await fs.mkdir(directory, 0o700);
  const path = joinPath(directory, `${seeded.sessionId}.jsonl`);
  await fs.createExclusive(path, seeded.bytes, 0o600);
  return { ...seeded, path, cwd };
}

/** Generates a history in memory; pure and deterministic. */
export function generateSession(options: SeedOptions): SeededSession {
  const rng = new Random(options.seed ?? 1);
  const base = Date.UTC(2026, 8, 1, 8, 0, 0) + rng.int(0, 30 * 86_400) * 1_000;
  const sessionId = options.sessionId ?? uuid7(base, rng.uuid4());
  const maxLines = options.maxLines ?? LIMITS.stored_history_lines;
  const target = options.targetBytes;
  const torn = options.torn === true;
  if (target !== undefined && options.turns !== undefined) throw new Error("give either targetBytes or turns, not both");
  const wanted = target === undefined ? options.turns ?? 20 : Number.POSITIVE_INFINITY;

  const writer = new TurnWriter(rng, sessionId, base);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let lines = 0;
  const take = (batch: Batch): void => {
    chunks.push(...batch.lines);
    bytes += batch.bytes;
    lines += batch.lines.length;
  };
  take(writer.opening(options.cwd));
  if (target !== undefined && bytes > target) throw new Error(`targetBytes ${target} is below the ${bytes}-byte opening`);

  // A torn fragment is at most this long, and is budgeted up front.
  const reserve = torn ? TORN_MAX_BYTES : 0;
  let turns = 0;
  let compact = false;
  while (turns < wanted) {
    const batch = writer.turn(turns, compact);
    const fits = (target === undefined || bytes + batch.bytes + reserve <= target) && lines + batch.lines.length <= maxLines;
    if (fits) {
      take(batch);
      turns++;
      continue;
    }
    if (target === undefined && lines + batch.lines.length > maxLines) break;
    // Close the gap with small turns, then stop at the first that does not fit either.
    if (compact) break;
    compact = true;
  }
  if (torn) chunks.push(writer.tornFragment(turns));

  return { sessionId, bytes: concatBytes(chunks), lines, turns, torn };
}

/** Parses a byte size: `67108864`, `64MiB`, `64 MiB`, `512K`, `1.5G` (K, M, G are binary: 1,024-based). */
export function parseByteSize(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$/i.exec(text);
  if (match === null) return null;
  const unit = (match[2] ?? "b").toLowerCase()[0]!;
  const scale = unit === "k" ? 1_024 : unit === "m" ? 1_048_576 : unit === "g" ? 1_073_741_824 : 1;
  const value = Math.floor(Number(match[1]) * scale);
  return Number.isSafeInteger(value) && value > 0 ? value : null;
}

const TORN_MAX_BYTES = 512;

type Batch = { lines: Uint8Array[]; bytes: number };

/** mulberry32: tiny, fast and good enough to vary fixtures; never Math.random. */
class Random {
  #state: number;

  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A skewed size in [min, max]: mostly small, sometimes large, as message sizes are. */
  size(min: number, max: number): number {
    const u = this.next();
    return Math.round(min + (max - min) * u * u);
  }

  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.int(0, 0xffff).toString(16).padStart(4, "0");
    return out.slice(0, length);
  }

  /** A random-looking v4 UUID (for uuid7's random bits). */
  uuid4(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  }

  alnum(length: number): string {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }
}

// ------------------------------------------------------------------ text

const WORDS = (
  "the a an this that we it is are was be to of in on for with by from as at " +
  "function module record session history page cursor revision snapshot projection appender lease " +
  "file line byte buffer stream reader writer parser schema type value field error code test " +
  "returns reads writes checks opens closes appends truncates splits joins encodes decodes validates " +
  "because so then now first next finally also only never always instead before after while " +
  "bounded durable torn partial complete stale busy missing invalid limit offset length size " +
  "worker loop event timer promise callback handle signal abort yield chunk part entry message"
).split(" ");

const CJK = [
  "这个函数返回一个新的快照",
  "测试已经通过了",
  "请检查会话文件的权限",
  "ファイルを読み込みます",
  "テストを実行しています",
  "設定ファイルが見つかりません",
  "세션 기록을 불러오는 중입니다",
  "변경 사항을 커밋하지 마세요",
  "错误：游标已过期",
  "中文、日本語、한국어",
];

const EMOJI = ["🚀", "✅", "❌", "⚠️", "👍🏽", "👨‍👩‍👧‍👦", "🦀", "📁", "🧪", "🔥", "🙂", "🏳️‍🌈", "❤️", "🇯🇵"];

// Decomposed forms: base letters followed by combining marks.
const COMBINING = [
  "e\u0301",
  "n\u0303",
  "A\u030a",
  "e\u0323\u0302",
  "o\u0308",
  "c\u0327",
  "Z\u0335\u0347",
  "u\u031b\u0300",
  "re\u0301sume\u0301",
  "nai\u0308ve",
];

const PATHS = [
  "src/store/session-file.ts",
  "src/store/projection.ts",
  "src/store/pages.ts",
  "src/store/appender.ts",
  "src/server.ts",
  "src/protocol/limits.ts",
  "tests/sessions.test.ts",
  "docs/storage.md",
  "runtime/node-runtime.ts",
  "src/util/safe-names.ts",
  "README.md",
  "bench/lib.mjs",
];

const CODE_LINES = [
  "const parsed = parseRecordLine(line, sessionId);",
  'if (!parsed.ok) return failed("session_invalid");',
  "for (let end = bytes.indexOf(LF); end !== -1; end = bytes.indexOf(LF, start)) {",
  'const path = joinPath(home, "sessions", `${id}.jsonl`);',
  "\treturn { ok: true, records, intactLength: start };",
  'const windows = "C:\\\\Users\\\\dev\\\\project";',
  "export async function readSessionFile(fs, path, sessionId, options) {",
  "  await options.yieldEvery?.();",
  'assert.equal(result.code, "history_limit");',
  "}",
  "// TODO: 检查边界条件 (boundary) ✅",
  'console.log("done \\u2713", count);',
];

const SHELL_LINES = [
  "$ npm test",
  "> magi-code@0.1.0 test",
  "▶ session file",
  "  ✔ reads a complete history (3.2ms)",
  "  ✔ keeps a torn tail out of the records (1.1ms)",
  "  ✖ refuses a swapped file (0.9ms)",
  "ℹ tests 214",
  "ℹ pass 213",
  "ℹ fail 1",
  "npm ERR! code ELIFECYCLE",
  "warning: LF will be replaced by CRLF in docs/storage.md",
  "Compiling magi-code v0.1.0 (/home/dev/magi-code)",
];

function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Prose of about `bytes` UTF-8 bytes: words, some code, multibyte text and emoji. */
function prose(rng: Random, bytes: number): string {
  const pieces: string[] = [];
  let size = 0;
  while (size < bytes) {
    const roll = rng.next();
    let piece: string;
    if (roll < 0.7) {
      const count = rng.int(4, 14);
      const words: string[] = [];
      for (let i = 0; i < count; i++) words.push(rng.pick(WORDS));
      piece = `${words.join(" ")}${rng.pick([". ", ", ", "; ", ": ", "? ", ".\n"])}`;
    } else if (roll < 0.78) piece = `${rng.pick(CJK)}。`;
    else if (roll < 0.84) piece = `${rng.pick(EMOJI)} `;
    else if (roll < 0.89) piece = `${rng.pick(COMBINING)} `;
    else if (roll < 0.94) piece = `\`${rng.pick(PATHS)}\` `;
    else piece = `\n\`\`\`ts\n${rng.pick(CODE_LINES)}\n${rng.pick(CODE_LINES)}\n\`\`\`\n`;
    pieces.push(piece);
    size += utf8Length(piece);
  }
  return pieces.join("");
}

/** A tool's output as the provider replays it: numbered source, grep hits or a shell log. */
function toolOutput(rng: Random, tool: Tool, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  let number = rng.int(1, 400);
  while (size < bytes) {
    let line: string;
    if (tool === "read_file") line = `${String(number++).padStart(5)}\t${rng.chance(0.9) ? rng.pick(CODE_LINES) : prose(rng, 60)}`;
    else if (tool === "grep") line = `${rng.pick(PATHS)}:${rng.int(1, 900)}: ${rng.pick(CODE_LINES)}`;
    else line = rng.chance(0.8) ? rng.pick(SHELL_LINES) : prose(rng, 80).replaceAll("\n", " ");
    lines.push(line);
    size += utf8Length(line) + 1;
  }
  return lines.join("\n");
}

/** Cuts `text` into streamed pieces of `min`–`max` UTF-16 units, never inside a surrogate pair. */
function streamPieces(rng: Random, text: string, min: number, max: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + rng.int(min, max));
    const unit = text.charCodeAt(end - 1);
    if (end < text.length && unit >= 0xd800 && unit <= 0xdbff) end++;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces.length === 0 ? [""] : pieces;
}

// ------------------------------------------------------------------ records

type Tool = "read_file" | "grep" | "shell";
const TOOLS: readonly Tool[] = ["read_file", "read_file", "grep", "shell"];
const FAILURES = ["provider_error", "rate_limited", "context_length_exceeded", "network_error"];

/** Writes the records of a history in order, with advancing timestamps. */
class TurnWriter {
  readonly #rng: Random;
  readonly #sessionId: string;
  #clock: number;
  #tokens = 0;

  constructor(rng: Random, sessionId: string, start: number) {
    this.#rng = rng;
    this.#sessionId = sessionId;
    this.#clock = start;
  }

  #at(stepMin = 3, stepMax = 400): string {
    this.#clock += this.#rng.int(stepMin, stepMax);
    return new Date(this.#clock).toISOString();
  }

  #common(stepMin?: number, stepMax?: number) {
    return { v: 1 as const, session_id: this.#sessionId, at: this.#at(stepMin, stepMax) };
  }

  #encode(batch: Batch, record: SessionRecord): void {
    const line = encodeRecord(record);
    if (line === null) throw new Error(`bug: encodeRecord refused a seeded ${record.type} record`);
    batch.lines.push(line);
    batch.bytes += line.length;
  }

  /** The `session` record (and the saved selection). */
  opening(cwd: string): Batch {
    const batch: Batch = { lines: [], bytes: 0 };
    const created = new Date(this.#clock).toISOString();
    this.#encode(batch, { v: 1, type: "session", session_id: this.#sessionId, at: created, cwd, created_at: created });
    this.#encode(batch, {
      ...this.#common(),
      type: "session_preferences",
      provider: "openai",
      model: "gpt-5.1-codex",
      effort: "medium",
    });
    return batch;
  }

  /**
   * One turn. `compact` turns are small (short texts, no tool output), for
   * closing the last gap to a byte target.
   */
  turn(index: number, compact: boolean): Batch {
    const rng = this.#rng;
    const batch: Batch = { lines: [], bytes: 0 };
    const add = (record: SessionRecord) => this.#encode(batch, record);
    const turnId = `turn-${index + 1}`;
    const runId = `run_${rng.alnum(20)}`;
    const roll = rng.next();
    const outcome = compact ? "completed" : roll < 0.06 ? "failed" : roll < 0.1 ? "cancelled" : "completed";

    add({ ...this.#common(5_000, 600_000), type: "turn_started", turn_id: turnId, run_id: runId });
    add({
      ...this.#common(),
      type: "user_input",
      turn_id: turnId,
      message_id: `user-${index + 1}`,
      text: prose(rng, compact ? rng.int(20, 120) : rng.size(40, 1_600)),
    });
    if (!compact && rng.chance(0.15)) {
      const reminder = `<system-reminder>\nThe user's workspace is ${rng.pick(PATHS)}; keep edits minimal.\n${prose(rng, rng.int(400, 2_500))}\n</system-reminder>`;
      add({ ...this.#common(), type: "internal_prompt", turn_id: turnId, text: reminder });
    }
    if (!compact && rng.chance(0.6)) {
      const itemId = `rs_${rng.alnum(16)}`;
      const provenance = rng.next();
      const text = prose(rng, rng.size(120, 1_400));
      if (provenance < 0.65) {
        if (rng.chance(0.2)) {
          // A streamed summary: the later record with the same ids replaces this one.
          add({ ...this.#common(), type: "reasoning_summary", turn_id: turnId, item_id: itemId, text: text.slice(0, text.length >> 1), provider_summary: true });
        }
        add({ ...this.#common(), type: "reasoning_summary", turn_id: turnId, item_id: itemId, text, provider_summary: true });
      } else if (provenance < 0.8) {
        add({ ...this.#common(), type: "reasoning_summary", turn_id: turnId, item_id: itemId, text, provider_summary: false });
      } else {
        // A legacy record without provenance: never projected.
        add({ ...this.#common(), type: "reasoning_summary", turn_id: turnId, item_id: itemId, text });
      }
    }

    let messages = 0;
    const message = (text: string, partial: boolean, pieceMin: number, pieceMax: number) => {
      const messageId = `msg-${index + 1}-${++messages}`;
      const pieces = streamPieces(rng, text, pieceMin, pieceMax);
      // A failed or cancelled turn stops mid-stream: its final copy holds what was streamed.
      const streamed = partial ? pieces.slice(0, Math.max(1, rng.int(1, pieces.length))) : pieces;
      streamed.forEach((piece, chunk) => {
        add({ ...this.#common(1, 60), type: "assistant_chunk", turn_id: turnId, message_id: messageId, index: chunk, text: piece });
      });
      add({ ...this.#common(1, 30), type: "assistant_message", turn_id: turnId, message_id: messageId, text: streamed.join(""), partial });
    };

    const toolCount = compact ? 0 : rng.pick([0, 1, 2, 2, 3, 3, 3, 4, 4, 5]);
    if (toolCount > 0 && rng.chance(0.25)) message(prose(rng, rng.int(60, 300)), false, 8, 40);
    for (let call = 0; call < toolCount; call++) {
      const tool = rng.pick(TOOLS);
      const activityId = `call_${rng.alnum(24)}`;
      const path = rng.pick(PATHS);
      const started = tool === "read_file"
        ? `read_file ${path}`
        : tool === "grep"
        ? `grep "${rng.pick(WORDS)}${rng.pick(WORDS)}" in ${path.split("/")[0]}/`
        : `shell: ${rng.pick(["npm test", "npx tsc -p tsconfig.json", "git status --short", "deno test --allow-all tests/", "ls -la src/store"])}`;
      const common = { turn_id: turnId, activity_id: activityId, kind: "tool" as const, name: tool };
      add({ ...this.#common(), type: "activity", ...common, state: "started", summary: started });
      const cancelledHere = outcome === "cancelled" && call === toolCount - 1;
      const failedTool = cancelledHere || rng.chance(0.05);
      const detail = cancelledHere
        ? "cancelled by the user"
        : failedTool
        ? `failed: ${rng.pick(["exit code 1", "file not found", "timed out after 120 s", "权限被拒绝 (EACCES)"])}`
        : tool === "read_file"
        ? `read ${rng.int(20, 900)} lines`
        : tool === "grep"
        ? `${rng.int(0, 60)} matches in ${rng.int(1, 14)} files`
        : `exit 0 in ${(rng.next() * 30).toFixed(1)} s ${rng.pick(["✅", "🟢", ""])}`;
      add({ ...this.#common(50, 20_000), type: "activity", ...common, state: failedTool ? "failed" : "completed", summary: `${started} — ${detail}` });
      if (cancelledHere) break;
      if (rng.chance(0.85)) {
        add({ ...this.#common(), type: "internal_prompt", turn_id: turnId, text: toolOutput(rng, tool, rng.size(1_500, 42_000)) });
      }
    }

    const reply = prose(rng, compact ? rng.int(40, 400) : rng.size(300, 9_000));
    message(reply, outcome !== "completed", 14, 80);
    if (outcome !== "cancelled") {
      const input = (this.#tokens += rng.int(800, 12_000));
      const output = rng.int(40, 2_500);
      add({
        ...this.#common(),
        type: "usage",
        turn_id: turnId,
        input_tokens: input,
        output_tokens: output,
        ...(rng.chance(0.7) ? { reasoning_tokens: rng.int(0, 4_000) } : {}),
      });
    }
    add({
      ...this.#common(),
      type: "turn_finished",
      turn_id: turnId,
      outcome,
      error_code: outcome === "failed" ? rng.pick(FAILURES) : null,
    });
    return batch;
  }

  /** A record cut short without its LF: the start of the next turn's user input. */
  tornFragment(index: number): Uint8Array {
    const line = encodeRecord({
      ...this.#common(5_000, 60_000),
      type: "user_input",
      turn_id: `turn-${index + 1}`,
      message_id: `user-${index + 1}`,
      text: prose(this.#rng, 300),
    });
    if (line === null) throw new Error("bug: encodeRecord refused the torn record");
    // Cut anywhere before the LF, even inside a multibyte character: a torn tail is never decoded.
    const cut = Math.min(TORN_MAX_BYTES, Math.max(1, this.#rng.int(Math.floor(line.length / 3), line.length - 2)));
    return line.slice(0, cut);
  }
}
