/** Types of openapi-contract.mjs, the check of a request against quire's OpenAPI document. */

/** The JSON Schema subset quire's document uses. */
export interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  minItems?: number;
}

export interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}

export interface Operation {
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema } | undefined> };
}

export interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation | undefined>>;
}

/** What is wrong with `value` under `schema` (nothing: it is valid); `at` names the place. */
export function violations(value: unknown, schema: Schema, at: string): string[];

/** What the document does not allow in `METHOD path` with this body (nothing: it allows it). */
export function contractProblems(doc: OpenApi, method: string, path: string, body: string | undefined): string[];
