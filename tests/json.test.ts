import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseFrame } from "../src/protocol/json.ts";
import { LIMITS } from "../src/protocol/limits.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import type { JsonValue, ParseResult } from "../src/protocol/json-value.ts";

const encoder = new TextEncoder();
const INVALID_REQUEST = { ok: false, code: "invalid_request" } as const;
const INVALID_FRAME = { ok: false, code: "invalid_frame" } as const;

function parse(text: string): ParseResult {
  return parseFrame(encoder.encode(text));
}

function bytes(...parts: (string | number[])[]): Uint8Array {
  const out: number[] = [];
  for (const part of parts) out.push(...(typeof part === "string" ? encoder.encode(part) : part));
  return new Uint8Array(out);
}

/** Asserts success and returns the value. */
function value(result: ParseResult): JsonValue {
  assert.equal(result.ok, true, `expected ok, got ${JSON.stringify(result)}`);
  return result.ok ? result.value : null;
}

/** Asserts success, no duplicate, and the same JSON as `JSON.parse` of `text`. */
function assertSameAsJsonParse(text: string): void {
  const result = parse(text);
  assert.equal(JSON.stringify(value(result)), JSON.stringify(JSON.parse(text)), text);
  assert.equal(result.ok && result.duplicate, null);
}

function nestedArrays(depth: number): string {
  return "[".repeat(depth) + "]".repeat(depth);
}
function nestedObjects(depth: number): string {
  return "{\"a\":".repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
}
/** Alternates array and object levels: `[{"k":[{"k":...}]}]`. */
function nestedMixed(depth: number): string {
  let open = "";
  let close = "";
  for (let i = 0; i < depth; i++) {
    const array = i % 2 === 0;
    const last = i === depth - 1;
    open += array ? "[" : (last ? "{" : "{\"k\":");
    close = (array ? "]" : "}") + close;
  }
  return open + close;
}

/** Tails for a frame already too deep: broken syntax, closers, lone surrogate escapes, overflowing numbers, duplicates. */
const TAIL = fc
  .array(fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.constantFrom("]", "}", "]]]]", "}}}}", ",", ":", "\"", "\\ud800", "1e999", "-", "tru", "nul", "\"a\":1,\"a\":2", "\u0000", "\ufeff", " \t\r"),
  ), { maxLength: 30 })
  .map((parts) => parts.join(""));

/** Whether `s` has no lone surrogates, checked independently of the parser's own test. */
function wellFormed(s: string): boolean {
  return new TextDecoder().decode(encoder.encode(s)) === s;
}

describe("parseFrame() depth", () => {
  for (const [kind, build] of [["array", nestedArrays], ["object", nestedObjects], ["mixed", nestedMixed]] as const) {
    for (const depth of [31, 32]) {
      it(`parseFrame() accepts a ${depth}-deep ${kind}`, () => {
        const text = build(depth);
        assert.equal(JSON.stringify(value(parse(text))), JSON.stringify(JSON.parse(text)));
      });
    }
    for (const depth of [33, 34]) {
      it(`parseFrame() rejects a ${depth}-deep ${kind} with invalid_frame`, () => {
        assert.deepEqual(parse(build(depth)), INVALID_FRAME);
      });
    }
    it(`parseFrame() rejects a 100,000-deep ${kind} with invalid_frame`, () => {
      assert.deepEqual(parse(build(100_000)), INVALID_FRAME);
    });
    it(`parseFrame() stops at the 33rd opening of a ${kind}: nothing after it changes the answer`, () => {
      // Everything up to and including the container that exceeds the bound. A parser that went on
      // (checked syntax to the end, or measured the depth after parsing) would answer invalid_request
      // for a broken tail, or ok for one that closes the nesting early; this one answers invalid_frame
      // for every tail, so it never looked past the bound. How fast that is: bench/hostile-inputs.mjs.
      const text = build(LIMITS.json_depth + 1);
      let opened = 0;
      const end = [...text].findIndex((char) => (char === "[" || char === "{") && ++opened === LIMITS.json_depth + 1);
      const prefix = text.slice(0, end + 1);
      assert.deepEqual(parse(prefix), INVALID_FRAME);
      fc.assert(fc.property(TAIL, (tail) => {
        assert.deepEqual(parse(prefix + tail), INVALID_FRAME, JSON.stringify(tail.slice(0, 80)));
      }), { numRuns: fuzzRuns(300) });
    });
  }

  it("parseFrame() rejects 100,000 unclosed [ with invalid_frame", () => {
    assert.deepEqual(parse("[".repeat(100_000)), INVALID_FRAME);
  });

  it("parseFrame() counts an empty container at depth 33 as too deep", () => {
    assert.deepEqual(parse("[".repeat(32) + "{}" + "]".repeat(32)), INVALID_FRAME);
    assert.deepEqual(parse("[".repeat(32) + "[]" + "]".repeat(32)), INVALID_FRAME);
  });

  it("parseFrame() does not accumulate depth across siblings", () => {
    const deep = nestedArrays(31);
    value(parse(`[${Array(100).fill(deep).join(",")}]`));
    value(parse(`{"a":${deep},"b":${deep},"c":[${nestedArrays(30)}]}`));
  });

  it("parseFrame() reports whichever of a depth or syntax error comes first", () => {
    assert.deepEqual(parse("[".repeat(33) + "x"), INVALID_FRAME);
    assert.deepEqual(parse("[x" + "[".repeat(100)), INVALID_REQUEST);
    assert.deepEqual(parse("{\"a\" 1, \"b\":" + "[".repeat(100)), INVALID_REQUEST);
  });

  it("parseFrame() honours a custom maxDepth", () => {
    assert.deepEqual(parseFrame(encoder.encode("[[]]"), 1), INVALID_FRAME);
    value(parseFrame(encoder.encode("[[]]"), 2));
    value(parseFrame(encoder.encode("1"), 0));
    assert.deepEqual(parseFrame(encoder.encode("[]"), 0), INVALID_FRAME);
    assert.deepEqual(parseFrame(encoder.encode("[[[]]]"), 2), INVALID_FRAME);
  });

  it("parseFrame() throws RangeError for a maxDepth that is not a non-negative integer", () => {
    for (const bad of [-1, 1.5, Number.NaN, Infinity]) {
      assert.throws(() => parseFrame(encoder.encode("1"), bad), RangeError);
    }
  });
});

describe("parseFrame() duplicate keys", () => {
  it("parseFrame() reports a top-level duplicate and keeps the first value", () => {
    const result = parse("{\"id\":1,\"method\":\"x\",\"id\":2}");
    assert.deepEqual(result.ok && result.duplicate, { path: [], key: "id" });
    assert.equal(JSON.stringify(value(result)), "{\"id\":1,\"method\":\"x\"}");
  });

  it("parseFrame() compares decoded keys, so an escaped spelling is a duplicate", () => {
    for (const text of ["{\"id\":1,\"\\u0069d\":2}", "{\"\\u0069\\u0064\":1,\"id\":2}", "{\"a/b\":1,\"a\\/b\":2}",
      "{\"😀\":1,\"\\ud83d\\ude00\":2}"]) {
      const result = parse(text);
      assert.equal(result.ok && result.duplicate?.key, Object.keys(JSON.parse(text))[0], text);
      assert.deepEqual(result.ok && result.duplicate?.path, [], text);
      assert.equal(Object.values(value(result) as object)[0], 1, text);
    }
  });

  it("parseFrame() reports the path of a nested duplicate through objects and arrays", () => {
    const result = parse("{\"a\":[0,{\"b\":{\"x\":1,\"x\":2}}],\"c\":3}");
    assert.deepEqual(result.ok && result.duplicate, { path: ["a", 1, "b"], key: "x" });
    assert.equal(JSON.stringify(value(result)), "{\"a\":[0,{\"b\":{\"x\":1}}],\"c\":3}");
    const inArray = parse("[[1,2,{\"k\":1,\"\\u006b\":2}]]");
    assert.deepEqual(inArray.ok && inArray.duplicate, { path: [0, 2], key: "k" });
  });

  it("parseFrame() reports the first duplicate in document order, a root-level one first", () => {
    const flat = parse("{\"a\":1,\"b\":1,\"a\":2,\"b\":2}");
    assert.deepEqual(flat.ok && flat.duplicate, { path: [], key: "a" });
    const nestedOnly = parse("{\"y\":1,\"o\":{\"x\":1,\"x\":2,\"z\":1,\"z\":2}}");
    assert.deepEqual(nestedOnly.ok && nestedOnly.duplicate, { path: ["o"], key: "x" });
    const nestedFirst = parse("{\"y\":1,\"o\":{\"x\":1,\"x\":2},\"y\":2}");
    assert.deepEqual(nestedFirst.ok && nestedFirst.duplicate, { path: [], key: "y" });
    const topFirst = parse("{\"y\":1,\"y\":2,\"o\":{\"x\":1,\"x\":2}}");
    assert.deepEqual(topFirst.ok && topFirst.duplicate, { path: [], key: "y" });
  });

  it("parseFrame() lists every root-level duplicate key in rootDuplicates", () => {
    const result = parse("{\"m\":1,\"m\":2,\"o\":{\"x\":1,\"x\":2},\"id\":\"a\",\"\\u0069d\":\"b\"}");
    assert.ok(result.ok);
    assert.deepEqual(result.rootDuplicates, ["m", "id"]);
    const nested = parse("{\"o\":{\"x\":1,\"x\":2}}");
    assert.deepEqual(nested.ok && nested.rootDuplicates, []);
  });

  it("parseFrame() keeps the first value when the duplicate's value is a container", () => {
    const result = parse("{\"p\":{\"q\":1},\"p\":[{\"r\":2}]}");
    assert.deepEqual(result.ok && result.duplicate, { path: [], key: "p" });
    assert.equal(JSON.stringify(value(result)), "{\"p\":{\"q\":1}}");
  });

  it("parseFrame() still validates a duplicate's value strictly", () => {
    assert.deepEqual(parse("{\"a\":1,\"a\":[}"), INVALID_REQUEST);
    assert.deepEqual(parse("{\"a\":1,\"a\":" + nestedArrays(33) + "}"), INVALID_FRAME);
  });

  it("parseFrame() does not treat equal keys in different objects as duplicates", () => {
    const result = parse("[{\"a\":1},{\"a\":2},{\"b\":{\"a\":3},\"a\":4}]");
    assert.equal(result.ok && result.duplicate, null);
  });
});

describe("parseFrame() prototype safety", () => {
  it("parseFrame() stores __proto__ and constructor as own data with a null prototype", () => {
    const result = value(parse("{\"__proto__\":{\"polluted\":true},\"constructor\":{\"prototype\":1},\"toString\":2}"));
    const object = result as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(object), null);
    assert.deepEqual(Object.keys(object), ["__proto__", "constructor", "toString"]);
    assert.equal(Object.getOwnPropertyDescriptor(object, "__proto__")?.writable, true);
    assert.equal(object["polluted"], undefined);
    assert.equal(Object.getPrototypeOf(object["__proto__"]), null);
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    assert.equal(JSON.stringify(object), "{\"__proto__\":{\"polluted\":true},\"constructor\":{\"prototype\":1},\"toString\":2}");
  });

  it("parseFrame() gives every object, including empty and nested ones, a null prototype", () => {
    const result = value(parse("[{},{\"a\":{}}]")) as Record<string, unknown>[];
    assert.equal(Object.getPrototypeOf(result[0]), null);
    assert.equal(Object.getPrototypeOf(result[1]), null);
    assert.equal(Object.getPrototypeOf(result[1]?.["a"]), null);
    assert.ok(Array.isArray(result));
  });

  it("parseFrame() detects a duplicate __proto__ key", () => {
    const result = parse("{\"__proto__\":1,\"__proto__\":2}");
    assert.deepEqual(result.ok && result.duplicate, { path: [], key: "__proto__" });
    assert.equal((value(result) as Record<string, unknown>)["__proto__"], 1);
  });
});

describe("parseFrame() UTF-8", () => {
  const invalid: [string, number[]][] = [
    ["an overlong 2-byte slash (C0 AF)", [0xc0, 0xaf]],
    ["an overlong C1 BF", [0xc1, 0xbf]],
    ["an overlong 3-byte form (E0 80 AF)", [0xe0, 0x80, 0xaf]],
    ["an overlong 4-byte form (F0 80 80 AF)", [0xf0, 0x80, 0x80, 0xaf]],
    ["an encoded high surrogate (ED A0 80)", [0xed, 0xa0, 0x80]],
    ["an encoded low surrogate (ED BF BF)", [0xed, 0xbf, 0xbf]],
    ["a lone continuation byte 80", [0x80]],
    ["a lone continuation byte BF", [0xbf]],
    ["a truncated 2-byte sequence", [0xc3]],
    ["a truncated 3-byte sequence", [0xe2, 0x82]],
    ["a truncated 4-byte sequence", [0xf0, 0x9f, 0x98]],
    ["a code point above U+10FFFF (F4 90 80 80)", [0xf4, 0x90, 0x80, 0x80]],
    ["byte F5", [0xf5, 0x80, 0x80, 0x80]],
    ["byte FE", [0xfe]],
    ["byte FF", [0xff]],
  ];
  for (const [name, seq] of invalid) {
    it(`parseFrame() rejects ${name} with invalid_request`, () => {
      assert.deepEqual(parseFrame(bytes("\"a", seq, "b\"")), INVALID_REQUEST);
      assert.deepEqual(parseFrame(bytes("{\"k\":1}", seq)), INVALID_REQUEST);
    });
  }

  it("parseFrame() rejects a leading BOM with invalid_request", () => {
    assert.deepEqual(parseFrame(bytes([0xef, 0xbb, 0xbf], "{}")), INVALID_REQUEST);
    assert.deepEqual(parseFrame(bytes([0xef, 0xbb, 0xbf])), INVALID_REQUEST);
  });

  it("parseFrame() keeps a U+FEFF inside a string", () => {
    assert.equal(value(parseFrame(bytes("\"", [0xef, 0xbb, 0xbf], "\""))), "\ufeff");
  });

  it("parseFrame() decodes 2-, 3- and 4-byte sequences and the U+10FFFF boundary", () => {
    assert.equal(value(parseFrame(bytes("\"", [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], "\""))), "é€😀");
    assert.equal(value(parseFrame(bytes("\"", [0xf4, 0x8f, 0xbf, 0xbf], "\""))), "\u{10ffff}");
    assert.equal(value(parseFrame(bytes("\"", [0xef, 0xbf, 0xbf], "\""))), "\uffff");
  });
});

describe("parseFrame() numbers", () => {
  it("parseFrame() accepts every RFC 8259 number form", () => {
    for (const text of ["0", "-0", "1", "-1", "10", "1234567890", "0.5", "-0.5", "1.25", "1e5", "1E5", "1e+5", "1e-5",
      "1.5e-10", "-1.5E+10", "0e0", "0.0e-0", "123456789012345678901234567890", "1.7976931348623157e308",
      "-1.7976931348623157e308", "5e-324", "1e-400", "9007199254740993", "[0,-0,1]"]) {
      assertSameAsJsonParse(text);
    }
  });

  it("parseFrame() rejects malformed numbers with invalid_request", () => {
    for (const text of ["01", "-01", "00", "+1", ".5", "-.5", "1.", "1.e5", "-", "--1", "-a", "1e", "1e+", "1e-", "1E+-1",
      "0x10", "0b1", "1_000", "NaN", "Infinity", "-Infinity", "1 2", "1..2", "1.2.3", "1ee5", "[01]", "[1.]"]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects numbers that overflow to Infinity with invalid_request", () => {
    for (const text of ["1e400", "-1e400", "1e309", "1.8e308", "[1e999]", "{\"n\":-2e308}", "9".repeat(400)]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });
});

describe("parseFrame() strings", () => {
  it("parseFrame() decodes every simple escape", () => {
    assert.equal(value(parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"")), "\" \\ / \b \f \n \r \t");
  });

  it("parseFrame() decodes \\u escapes in either hex case", () => {
    assert.equal(value(parse("\"\\u0041\\u00e9\\u00E9\\u20AC\\u0000\\uffff\"")), "A\u00e9\u00e9\u20ac\u0000\uffff");
    assert.equal(value(parse("\"pre\\u0041mid\\nend\"")), "preAmid\nend");
  });

  it("parseFrame() rejects invalid escapes with invalid_request", () => {
    for (const text of ["\"\\a\"", "\"\\x41\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\U0041\"", "\"\\'\"", "\"\\\"", "\"\\",
      "\"\\u\"", "\"\\u004\"", "\"\\ \"", "\"\\0\""]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects each unescaped control character U+0000 to U+001F with invalid_request", () => {
    for (let c = 0; c < 0x20; c++) {
      assert.deepEqual(parse(`"a${String.fromCharCode(c)}b"`), INVALID_REQUEST, `U+${c.toString(16)}`);
      assert.deepEqual(parse(`"a\\n${String.fromCharCode(c)}"`), INVALID_REQUEST, `U+${c.toString(16)} after escape`);
    }
  });

  it("parseFrame() accepts raw DEL and U+2028", () => {
    assert.equal(value(parse("\"\u007f\u2028\u2029\"")), "\u007f\u2028\u2029");
  });

  it("parseFrame() rejects unterminated strings with invalid_request", () => {
    for (const text of ["\"", "\"abc", "\"abc\\\"", "{\"a", "[\"a\\u0041"]) assert.deepEqual(parse(text), INVALID_REQUEST, text);
  });

  it("parseFrame() rejects lone surrogate escapes with invalid_request", () => {
    for (const text of ["\"\\ud800\"", "\"\\udbff\"", "\"\\udc00\"", "\"\\udfff\"", "\"\\ud800\\u0041\"", "\"\\ud800x\"",
      "\"\\udc00\\ud800\"", "\"\\ud800\\ud800\"", "\"\\ud83d\\n\"", "\"a\\ud83d\"", "{\"\\ud800\":1}", "\"\\ud83d\\ude0\""]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() accepts valid surrogate pair escapes", () => {
    assert.equal(value(parse("\"\\ud83d\\ude00\"")), "😀");
    assert.equal(value(parse("\"\\uD83D\\uDE00\"")), "😀");
    assert.equal(value(parse("\"\\ud800\\udc00\\udbff\\udfff\"")), "\u{10000}\u{10ffff}");
  });

  it("parseFrame() accepts raw astral characters", () => {
    assert.equal(value(parse("\"😀𝄞\"")), "😀𝄞");
    assert.equal(JSON.stringify(value(parse("{\"😀\":[\"𝄞\"]}"))), "{\"😀\":[\"𝄞\"]}");
  });
});

describe("parseFrame() grammar", () => {
  it("parseFrame() accepts all four whitespace characters, including CR, between every token", () => {
    for (const ws of [" ", "\t", "\n", "\r", " \t\r\n"]) {
      const text = ["", "{", "\"a\"", ":", "[", "1", ",", "true", ",", "null", "]", ",", "\"b\"", ":", "{", "}", "}", ""].join(ws);
      assert.equal(JSON.stringify(value(parse(text))), "{\"a\":[1,true,null],\"b\":{}}", JSON.stringify(ws));
    }
  });

  it("parseFrame() accepts a frame ending in CR", () => {
    assert.equal(JSON.stringify(value(parse("{\"id\":\"r1\"}\r"))), "{\"id\":\"r1\"}");
  });

  it("parseFrame() rejects non-JSON whitespace with invalid_request", () => {
    for (const ws of ["\f", "\v", "\u00a0", "\u2028", "\ufeff", "\u3000", "\0"]) {
      assert.deepEqual(parse(`${ws}{}`), INVALID_REQUEST, JSON.stringify(ws));
      assert.deepEqual(parse(`[1,${ws}2]`), INVALID_REQUEST, JSON.stringify(ws));
    }
  });

  it("parseFrame() rejects empty and whitespace-only frames with invalid_request", () => {
    for (const text of ["", " ", "\r", " \t\r\n "]) assert.deepEqual(parse(text), INVALID_REQUEST, JSON.stringify(text));
  });

  it("parseFrame() accepts top-level scalars and empty containers", () => {
    for (const text of ["true", "false", "null", "\"\"", "42", "[]", "{}", "[ ]", "{ \r\n }", " [ [ ] , { } ] "]) {
      assertSameAsJsonParse(text);
    }
  });

  it("parseFrame() rejects malformed literals with invalid_request", () => {
    for (const text of ["tru", "True", "nul", "nulll", "truefalse", "falsey", "NULL", "undefined", "[t]", "{\"a\":nul}"]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects trailing, leading and missing commas with invalid_request", () => {
    for (const text of ["[1,]", "{\"a\":1,}", "[,1]", "{,\"a\":1}", "[1,,2]", "[1 2]", "{\"a\":1 \"b\":2}", "[,]", "{,}", ","]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects malformed objects with invalid_request", () => {
    for (const text of ["{\"a\" 1}", "{a:1}", "{'a':1}", "{1:2}", "{\"a\"::1}", "{\"a\":}", "{\"a\"}", "{:1}", "{null:1}",
      "{\"a\":1:2}", "{[]:1}", "{{}:1}"]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects unbalanced and mismatched brackets with invalid_request", () => {
    for (const text of ["[", "{", "[1", "{\"a\":1", "[}", "{]", "[]]", "{}}", "]", "}", "[[]", "[{]}", "{\"a\":[}]"]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() rejects trailing garbage and multiple values with invalid_request", () => {
    for (const text of ["{} x", "{}{}", "1 2", "[] []", "\"a\" \"b\"", "null,", "{}\r\n{}", "true\u0000", "{}\\", "0 0"]) {
      assert.deepEqual(parse(text), INVALID_REQUEST, text);
    }
  });

  it("parseFrame() parses a typical request frame", () => {
    const text = "{\"protocol\":\"magi-code.local-agent\",\"version\":1,\"id\":\"r1\",\"method\":\"initialize\"," +
      "\"params\":{\"required_capabilities\":[\"status\",\"shutdown\"]}}";
    assertSameAsJsonParse(text);
  });
});

describe("parseFrame() properties", () => {
  /** Container nesting of a JSON value, counted as the parser counts it. */
  function depthOf(v: unknown): number {
    if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
    if (v !== null && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depthOf));
    return 0;
  }
  function hasNonFinite(v: unknown): boolean {
    if (typeof v === "number") return !Number.isFinite(v);
    return v !== null && typeof v === "object" && Object.values(v).some(hasNonFinite);
  }
  const values = fc.jsonValue({ maxDepth: 8 }).filter((v) => depthOf(v) <= 32);

  it("parseFrame() agrees with JSON.parse on any compact JSON.stringify output", () => {
    fc.assert(fc.property(values, (v) => {
      const text = JSON.stringify(v);
      const result = parseFrame(encoder.encode(text));
      assert.equal(result.ok, true);
      assert.equal(result.ok && result.duplicate, null);
      assert.equal(JSON.stringify(result.ok && result.value), JSON.stringify(JSON.parse(text)));
    }), { numRuns: 500 });
  });

  it("parseFrame() agrees with JSON.parse on pretty-printed output with CRLF line ends", () => {
    fc.assert(fc.property(values, fc.constantFrom(2, "\t", " \r"), (v, indent) => {
      const text = JSON.stringify(v, null, indent).replaceAll("\n", "\r\n");
      const result = parseFrame(encoder.encode(text));
      assert.equal(result.ok && result.duplicate, null);
      assert.equal(JSON.stringify(result.ok && result.value), JSON.stringify(JSON.parse(text)));
    }), { numRuns: 300 });
  });

  it("parseFrame() round-trips any well-formed string through JSON.stringify", () => {
    const strings = fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }).filter(wellFormed));
    fc.assert(fc.property(strings, (s) => {
      assert.equal(value(parseFrame(encoder.encode(JSON.stringify(s)))), s);
      assert.equal((value(parseFrame(encoder.encode(JSON.stringify({ [s]: s })))) as Record<string, unknown>)[s], s);
      const units = Array.from({ length: s.length }, (_, i) => `\\u${s.charCodeAt(i).toString(16).padStart(4, "0")}`);
      const escaped = `"${units.join("")}"`;
      assert.equal(value(parseFrame(encoder.encode(escaped))), s);
    }), { numRuns: 500 });
  });

  it("parseFrame() rejects exactly the strings whose JSON.stringify escapes a lone surrogate", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      const result = parseFrame(encoder.encode(JSON.stringify(s)));
      if (wellFormed(s)) assert.equal(value(result), s);
      else assert.deepEqual(result, INVALID_REQUEST);
    }), { numRuns: 500 });
  });

  it("parseFrame() ok-ness follows nesting depth exactly", () => {
    fc.assert(fc.property(fc.array(fc.boolean(), { maxLength: 64 }), (kinds) => {
      const text = kinds.map((array) => (array ? "[" : "{\"k\":")).join("") + "0" +
        kinds.map((array) => (array ? "]" : "}")).reverse().join("");
      const result = parse(text);
      if (kinds.length <= 32) assert.equal(JSON.stringify(value(result)), JSON.stringify(JSON.parse(text)));
      else assert.deepEqual(result, INVALID_FRAME);
    }), { numRuns: 300 });
  });

  it("parseFrame() accepts exactly what JSON.parse accepts on token soup", () => {
    const tokens = ["{", "}", "[", "]", ",", ":", "\"a\"", "\"\\n\"", "1", "-", "0", ".", "e", "+", "true", "null",
      " ", "\r", "\"", "\\", "x"];
    fc.assert(fc.property(fc.array(fc.constantFrom(...tokens), { maxLength: 30 }), (parts) => {
      const text = parts.join("");
      let expected: unknown;
      try {
        expected = JSON.parse(text);
      } catch {
        assert.deepEqual(parse(text), INVALID_REQUEST, text);
        return;
      }
      const result = parse(text);
      if (hasNonFinite(expected)) {
        assert.deepEqual(result, INVALID_REQUEST, text);
        return;
      }
      assert.equal(result.ok, true, text);
      if (result.ok && result.duplicate === null) assert.equal(JSON.stringify(result.value), JSON.stringify(expected), text);
    }), { numRuns: 2000 });
  });

  it("parseFrame() never throws on arbitrary bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (input) => {
      const result = parseFrame(input);
      assert.equal(typeof result.ok, "boolean");
    }), { numRuns: 1000 });
  });
});
