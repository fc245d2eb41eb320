/**
 * The JSON Schema subset a client tool's `input_schema` may use
 * (docs/features/local-agent-client-tools.md, "The JSON Schema subset"), and
 * the validation of arguments against it. The subset holds only keywords
 * this module enforces exactly: a keyword it would ignore would be a check
 * the client believes holds and that does not, so any other keyword makes
 * the schema unacceptable rather than being skipped.
 *
 * @module
 */

/** Deepest nesting of schema nodes, the top node counting 1. */
export const MAX_SCHEMA_DEPTH = 8;

/** Most values of one `enum`. */
export const MAX_ENUM_VALUES = 64;

const TYPES: ReadonlySet<string> = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/** The keywords each type admits besides `type`, `description` and `enum`. */
const KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  object: ["properties", "required", "additionalProperties"],
  array: ["items", "minItems", "maxItems"],
  string: ["minLength", "maxLength"],
  number: ["minimum", "maximum"],
  integer: ["minimum", "maximum"],
  boolean: [],
  null: [],
};

type Node = Readonly<Record<string, unknown>>;

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isNumber = (value: unknown): value is number => typeof value === "number" && Number.isFinite(value);

/** Whether `min` and `max` (each optional) are of the kind `is` accepts and ordered. */
function bounds(node: Node, min: string, max: string, is: (value: unknown) => value is number): boolean {
  const low = node[min];
  const high = node[max];
  if (low !== undefined && !is(low)) return false;
  if (high !== undefined && !is(high)) return false;
  return low === undefined || high === undefined || (low as number) <= (high as number);
}

/** Whether JSON value `value` is of JSON Schema type `type`. */
function ofType(type: string, value: unknown): boolean {
  switch (type) {
    case "object":
      return isNode(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "number":
      return isNumber(value);
    case "integer":
      return isNumber(value) && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    default:
      return value === null;
  }
}

/** Whether `values` is a valid `enum` for `type`: 1–64 distinct scalars of that type. */
function validEnum(type: string, values: unknown): boolean {
  if (!Array.isArray(values) || values.length === 0 || values.length > MAX_ENUM_VALUES) return false;
  if (!values.every((value) => ofType(type, value) && (value === null || typeof value !== "object"))) return false;
  return new Set(values).size === values.length;
}

/** Whether `node` is a schema of the subset, nested at `depth` (the top node is 1). */
export function isSubsetSchema(node: unknown, depth = 1): boolean {
  if (!isNode(node) || depth > MAX_SCHEMA_DEPTH) return false;
  const type = node.type;
  if (typeof type !== "string" || !TYPES.has(type)) return false;
  const allowed = new Set(["type", "description", "enum", ...KEYWORDS[type]!]);
  if (!Object.keys(node).every((key) => allowed.has(key))) return false;
  if (node.description !== undefined && typeof node.description !== "string") return false;
  if (node.enum !== undefined && !validEnum(type, node.enum)) return false;
  switch (type) {
    case "object":
      return validObject(node, depth);
    case "array":
      return bounds(node, "minItems", "maxItems", isCount) && (node.items === undefined || isSubsetSchema(node.items, depth + 1));
    case "string":
      return bounds(node, "minLength", "maxLength", isCount);
    case "number":
    case "integer":
      return bounds(node, "minimum", "maximum", isNumber);
    default:
      return true;
  }
}

function validObject(node: Node, depth: number): boolean {
  const { properties, required, additionalProperties } = node;
  if (additionalProperties !== undefined && typeof additionalProperties !== "boolean") return false;
  if (properties !== undefined && (!isNode(properties) || !Object.values(properties).every((child) => isSubsetSchema(child, depth + 1)))) return false;
  if (required === undefined) return true;
  if (!Array.isArray(required) || new Set(required).size !== required.length) return false;
  return required.every((name) => typeof name === "string" && isNode(properties) && Object.hasOwn(properties, name));
}

/** Most problems {@link argumentProblems} lists. */
const MAX_PROBLEMS = 5;

/**
 * What is wrong with `value` as an instance of subset schema `schema`, as
 * short phrases naming the JSON path (at most five); empty when it is valid.
 * `schema` must have passed {@link isSubsetSchema}.
 */
export function argumentProblems(schema: unknown, value: unknown): string[] {
  const problems: string[] = [];
  check(schema as Node, value, "arguments", problems);
  return problems.slice(0, MAX_PROBLEMS);
}

const codePoints = (text: string): number => [...text].length;

function check(node: Node, value: unknown, path: string, problems: string[]): void {
  if (problems.length >= MAX_PROBLEMS) return;
  const type = node.type as string;
  if (!ofType(type, value)) return void problems.push(`${path}: expected ${type === "integer" ? "an integer" : type}`);
  if (Array.isArray(node.enum) && !node.enum.includes(value)) return void problems.push(`${path}: not one of the allowed values`);
  const outside = (low: unknown, high: unknown, measure: number, what: string) => {
    if (typeof low === "number" && measure < low) problems.push(`${path}: ${what} below ${low}`);
    if (typeof high === "number" && measure > high) problems.push(`${path}: ${what} above ${high}`);
  };
  if (type === "string") outside(node.minLength, node.maxLength, codePoints(value as string), "length");
  if (type === "number" || type === "integer") outside(node.minimum, node.maximum, value as number, "value");
  if (type === "array") {
    const items = value as unknown[];
    outside(node.minItems, node.maxItems, items.length, "item count");
    if (isNode(node.items)) items.forEach((item, index) => check(node.items as Node, item, `${path}[${index}]`, problems));
  }
  if (type === "object") checkObject(node, value as Node, path, problems);
}

function checkObject(node: Node, value: Node, path: string, problems: string[]): void {
  const properties = isNode(node.properties) ? node.properties : {};
  for (const name of (node.required as string[] | undefined) ?? []) {
    if (!Object.hasOwn(value, name)) problems.push(`${path}: missing ${JSON.stringify(name)}`);
  }
  for (const [name, item] of Object.entries(value)) {
    const child = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (child !== undefined) check(child as Node, item, `${path}.${name}`, problems);
    else if (node.additionalProperties === false) problems.push(`${path}: unexpected ${JSON.stringify(name)}`);
  }
}
