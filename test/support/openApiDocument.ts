// The parts of the service's OpenAPI document (GET /openapi.json) that the suites read, typed as
// src/http/openapi.ts writes them: the suites check the document, so each member they rely on is
// asserted before use or optional here.

/** A JSON Schema node of the document, with the keywords it uses; `$ref` points into the document. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  propertyNames?: Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  oneOf?: Schema[];
  anyOf?: Schema[];
  discriminator?: { propertyName: string; mapping: Record<string, string> };
  description?: string;
}

export interface Parameter {
  $ref?: string;
  name?: string;
  in?: string;
  required?: boolean;
  description?: string;
  example?: unknown;
}

/** A body the document describes, with its examples. */
export interface Media {
  schema?: Schema;
  example?: Record<string, unknown>;
  examples?: Record<string, { value: Record<string, unknown> }>;
}

export interface Operation {
  operationId: string;
  summary?: string;
  /** The permission an admin operation needs; absent for the others. */
  'x-permission'?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { description?: string; content?: Record<string, Media> }>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  servers?: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, Parameter>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}
