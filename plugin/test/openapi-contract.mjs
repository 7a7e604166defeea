// A request against quire's OpenAPI document (`GET /api/openapi.json`): what in it the document
// does not allow. Pure and without dependencies, a plain ES module so that both sides that hold
// their requests to the document import the same check: the plugin's tests (test/contract.ts,
// which sees the plugin's requests; types in openapi-contract.d.mts) and the web page's browser
// tests (web-tests/test/page.test.mjs, which sees the page's).

// ---- The JSON Schema subset quire's document uses -------------------------------------------

// By hand, not a validator package: the document uses a small subset of JSON Schema 2020-12, and
// 60 lines check it without a dependency. A keyword outside the subset is reported, not skipped.

/** @typedef {import("./openapi-contract.d.mts").Schema} Schema */
/** @typedef {import("./openapi-contract.d.mts").OpenApi} OpenApi */

const CHECKED = new Set(["type", "properties", "required", "additionalProperties", "items", "oneOf", "enum", "const", "maxLength", "minLength", "pattern", "minimum", "maximum", "maxItems", "minItems"]);
/** Keywords that only describe (formats are annotations in 2020-12 unless a vocabulary says otherwise). */
const ANNOTATIONS = new Set(["description", "default", "examples", "format", "title", "deprecated", "readOnly", "writeOnly"]);

/** @param {unknown} value @returns {string} */
const show = (value) => JSON.stringify(value) ?? String(value);

/** @param {unknown} value @param {string} type @returns {boolean} */
function isType(value, type) {
  switch (type) {
    case "null":
      return value === null;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/**
 * What is wrong with `value` under `schema` (nothing: it is valid); `at` names the place.
 * @param {unknown} value
 * @param {Schema} schema
 * @param {string} at
 * @returns {string[]}
 */
export function violations(value, schema, at) {
  /** @type {string[]} */
  const out = [];
  for (const keyword of Object.keys(schema)) {
    if (!CHECKED.has(keyword) && !ANNOTATIONS.has(keyword)) out.push(`${at}: the schema uses \`${keyword}\`, which this check does not know`);
  }
  if (schema.type !== undefined) {
    const types = typeof schema.type === "string" ? [schema.type] : schema.type;
    if (!types.some((type) => isType(value, type))) return [...out, `${at}: ${show(value)} is not of type ${types.join(" or ")}`];
  }
  if (schema.enum && !schema.enum.some((option) => show(option) === show(value))) out.push(`${at}: ${show(value)} is not one of ${show(schema.enum)}`);
  if ("const" in schema && show(schema.const) !== show(value)) out.push(`${at}: ${show(value)} is not ${show(schema.const)}`);
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((option) => violations(value, option, at).length === 0).length;
    if (matching !== 1) out.push(`${at}: ${show(value)} matches ${matching} of the ${schema.oneOf.length} schemas of oneOf (exactly one must)`);
  }
  if (typeof value === "string") {
    const length = [...value].length; // code points, as JSON Schema counts
    if (schema.maxLength !== undefined && length > schema.maxLength) out.push(`${at}: ${length} characters, more than maxLength ${schema.maxLength}`);
    if (schema.minLength !== undefined && length < schema.minLength) out.push(`${at}: ${length} characters, fewer than minLength ${schema.minLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) out.push(`${at}: ${show(value)} does not match ${schema.pattern}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${at}: ${value} is less than minimum ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${at}: ${value} is more than maximum ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) out.push(`${at}: ${value.length} items, more than maxItems ${schema.maxItems}`);
    if (schema.minItems !== undefined && value.length < schema.minItems) out.push(`${at}: ${value.length} items, fewer than minItems ${schema.minItems}`);
    const items = schema.items;
    if (items) value.forEach((/** @type {unknown} */ item, i) => out.push(...violations(item, items, `${at}[${i}]`)));
  }
  if (isType(value, "object")) {
    const object = /** @type {Record<string, unknown>} */ (value);
    for (const name of schema.required ?? []) if (!(name in object)) out.push(`${at}: the required property \`${name}\` is missing`);
    for (const [name, item] of Object.entries(object)) {
      const property = schema.properties?.[name];
      if (property) out.push(...violations(item, property, `${at}.${name}`));
      else if (schema.additionalProperties === false) out.push(`${at}: the property \`${name}\` is not in the schema (additionalProperties: false)`);
      else if (typeof schema.additionalProperties === "object") out.push(...violations(item, schema.additionalProperties, `${at}.${name}`));
    }
  }
  return out;
}

// ---- A request against the document -----------------------------------------------------------

/**
 * The documented path `pathname` is: `{path}` takes the rest (quire's routes are `/api/notes/{*path}`), other `{name}`s one segment.
 * @param {OpenApi} doc
 * @param {string} pathname
 * @returns {{ template: string, params: [string, string][] } | null}
 */
function route(doc, pathname) {
  for (const template of Object.keys(doc.paths)) {
    /** @type {string[]} */
    const names = [];
    const source = template
      .split(/(\{[^}]+\})/)
      .map((piece) => {
        const name = /^\{(.+)\}$/.exec(piece)?.[1];
        if (name === undefined) return piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        names.push(name);
        return name === "path" ? "(.+)" : "([^/]+)";
      })
      .join("");
    const match = new RegExp(`^${source}$`).exec(pathname);
    if (match) return { template, params: names.map((name, i) => /** @type {[string, string]} */ ([name, match[i + 1] ?? ""])) };
  }
  return null;
}

/**
 * A query parameter's text as the value its schema types (the server parses it so).
 * @param {string[]} texts
 * @param {Schema} schema
 * @returns {unknown}
 */
function queryValue(texts, schema) {
  const types = schema.type === undefined ? [] : typeof schema.type === "string" ? [schema.type] : schema.type;
  if (types.includes("array")) return texts.map((text) => queryValue([text], schema.items ?? {}));
  if (texts.length !== 1) return texts; // repeated: not of its (scalar) type
  const text = texts[0] ?? "";
  if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (types.includes("boolean") && (text === "true" || text === "false")) return text === "true";
  return text;
}

/**
 * What the document does not allow in `METHOD path` with this body (nothing: it allows it).
 * `path` is the request's path and query (an absolute URL works too: its origin is ignored).
 * @param {OpenApi} doc
 * @param {string} method
 * @param {string} path
 * @param {string | undefined} body
 * @returns {string[]}
 */
export function contractProblems(doc, method, path, body) {
  const url = new URL(path, "http://quire.invalid");
  const found = route(doc, url.pathname);
  if (!found) return [`the document has no path that matches ${url.pathname}`];
  const operation = doc.paths[found.template]?.[method.toLowerCase()];
  if (!operation) return [`the document has no ${method} for ${found.template}`];
  /** @type {string[]} */
  const out = [];
  const parameters = operation.parameters ?? [];
  for (const [name, raw] of found.params) {
    const documented = parameters.find((p) => p.in === "path" && p.name === name);
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      out.push(`path parameter ${name}: ${raw} is not percent-encoded correctly`);
    }
    if (!documented) out.push(`path parameter ${name} is not documented for ${found.template}`);
    else out.push(...violations(value, documented.schema ?? {}, `path parameter ${name}`));
  }
  /** @type {Map<string, string[]>} */
  const query = new Map();
  for (const [name, value] of url.searchParams) query.set(name, [...(query.get(name) ?? []), value]);
  for (const [name, texts] of query) {
    const documented = parameters.find((p) => p.in === "query" && p.name === name);
    if (!documented) out.push(`query parameter ${name} is not documented for ${method} ${found.template}`);
    else out.push(...violations(queryValue(texts, documented.schema ?? {}), documented.schema ?? {}, `query parameter ${name}`));
  }
  for (const p of parameters) if (p.in === "query" && p.required && !query.has(p.name)) out.push(`the required query parameter ${p.name} is missing`);
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  if (body === undefined || body === "") {
    if (operation.requestBody?.required) out.push("the document requires a JSON body, and none was sent");
  } else if (!schema) {
    out.push(`a body was sent, and the document describes no JSON body for ${method} ${found.template}`);
  } else {
    /** @type {unknown} */
    let value;
    try {
      value = JSON.parse(body);
    } catch {
      return [...out, "the body is not JSON"];
    }
    out.push(...violations(value, schema, "body"));
  }
  return out;
}
