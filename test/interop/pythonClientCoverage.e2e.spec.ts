// The Python client cannot drift from the service: every admin operation of the OpenAPI document a
// running service serves is one of its endpoints (same method and path, none extra), its method
// exists on a real client and takes exactly the operation's parameters (path, query and body
// fields, snake_cased, required where the document requires them, plus idempotency_key for a
// POST), its answer type has the fields of the document's answer schema at every level, and every
// data.reason of the service's closed list has an error class.
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ERROR_REASONS } from '../../src/contract/answers.js';
import { withHarness } from '../support/harness.js';
import type { OpenApiDocument, Operation, Schema } from '../support/openApiDocument.js';
import { runPython } from '../support/python.js';

const DESCRIBE = fileURLToPath(new URL('./python/describe_client.py', import.meta.url));

/** A Python type as describe_client.py reports it. */
type Shape =
  | { kind: 'object'; name: string; required: string[]; fields: Record<string, Shape> }
  | { kind: 'union'; options: Shape[] }
  | { kind: 'literal'; values: unknown[] }
  | { kind: 'array'; items: Shape }
  | { kind: 'map'; values: Shape }
  | { kind: 'scalar'; types: string[] }
  | { kind: 'any' };

interface Described {
  endpoints: Array<{
    operationId: string;
    method: string;
    path: string;
    call: string;
    callable: boolean;
    parameters: Array<{ name: string; required: boolean; keywordOnly: boolean }>;
    answer: Shape;
  }>;
  reasons: Record<string, { class: string; bridgeError: boolean }>;
  inputs: Record<string, Shape>;
}

async function describeClient(): Promise<Described> {
  const run = await runPython([DESCRIBE]);
  assert.is(run.code, 0, `describe_client.py:\n${run.stdout}${run.stderr}`);
  assert.is(run.stderr, '');
  return JSON.parse(run.stdout) as Described;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function resolve(document: OpenApiDocument, schema: Schema): Schema {
  const ref = schema.$ref;
  if (ref === undefined) return schema;
  const target = document.components.schemas[ref.replace('#/components/schemas/', '')];
  assert.ok(target, `${ref} is in the document`);
  return resolve(document, target!);
}

const SCALARS: Record<string, string[]> = { string: ['string'], integer: ['integer'], number: ['number', 'integer'], boolean: ['boolean'] };

/** Every way the shape differs from the schema, by where. */
function differences(document: OpenApiDocument, shape: Shape, given: Schema, where: string): string[] {
  const schema = resolve(document, given);
  const options = schema.anyOf ?? schema.oneOf;
  if (options) {
    if (shape.kind !== 'union' || shape.options.length !== options.length)
      return [`${where}: a union of ${options.length} in the document, ${JSON.stringify(shape).slice(0, 80)} in Python`];
    return options.flatMap((option, n) => differences(document, shape.options[n]!, option, `${where}|${n}`));
  }
  const constant = 'const' in schema ? [schema.const] : schema.enum;
  if (constant) {
    if (shape.kind !== 'literal') return [`${where}: the values ${JSON.stringify(constant)} in the document, a ${shape.kind} in Python`];
    return JSON.stringify([...shape.values].sort()) === JSON.stringify([...constant].sort())
      ? []
      : [`${where}: ${JSON.stringify(constant)} in the document, ${JSON.stringify(shape.values)} in Python`];
  }
  if (schema.type === 'array') {
    if (shape.kind !== 'array') return [`${where}: an array in the document, a ${shape.kind} in Python`];
    return differences(document, shape.items, schema.items ?? {}, `${where}[]`);
  }
  if (schema.type === 'object' && schema.properties) {
    if (shape.kind !== 'object') return [`${where}: an object in the document, a ${shape.kind} in Python`];
    const named = Object.keys(schema.properties).sort();
    const fields = Object.keys(shape.fields).sort();
    const problems: string[] = [];
    if (JSON.stringify(named) !== JSON.stringify(fields))
      problems.push(`${where} (${shape.name}): fields ${JSON.stringify(named)} in the document, ${JSON.stringify(fields)} in Python`);
    if (JSON.stringify([...(schema.required ?? [])].sort()) !== JSON.stringify(shape.required))
      problems.push(`${where} (${shape.name}): required ${JSON.stringify(schema.required ?? [])} in the document, ${JSON.stringify(shape.required)} in Python`);
    for (const name of named) if (shape.fields[name]) problems.push(...differences(document, shape.fields[name]!, schema.properties[name]!, `${where}.${name}`));
    return problems;
  }
  if (schema.type === 'object' && typeof schema.additionalProperties === 'object') {
    if (shape.kind !== 'map') return [`${where}: a map in the document, a ${shape.kind} in Python`];
    return differences(document, shape.values, schema.additionalProperties, `${where}{}`);
  }
  if (typeof schema.type === 'string' && SCALARS[schema.type]) {
    if (shape.kind !== 'scalar' || !shape.types.some((t) => SCALARS[schema.type as string]!.includes(t)))
      return [`${where}: ${schema.type} in the document, ${JSON.stringify(shape)} in Python`];
    return [];
  }
  if (schema.type === undefined) return shape.kind === 'any' ? [] : [`${where}: any value in the document, ${shape.kind} in Python`];
  return [`${where}: ${JSON.stringify(schema).slice(0, 80)} is not compared`];
}

/** The operation's parameters as the Python method names them: path and query by name, body fields snake_cased. */
function expectedParameters(document: OpenApiDocument, method: string, operation: Operation): Array<{ name: string; required: boolean }> {
  const expected: Array<{ name: string; required: boolean }> = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.$ref === '#/components/parameters/IdempotencyKey') expected.push({ name: 'idempotency_key', required: false });
    else expected.push({ name: snake(parameter.name!), required: parameter.required === true });
  }
  const body = operation.requestBody?.content['application/json']?.schema;
  if (body) {
    const schema = resolve(document, body);
    for (const name of Object.keys(schema.properties ?? {})) expected.push({ name: snake(name), required: (schema.required ?? []).includes(name) });
  }
  assert.ok(method !== 'post' || expected.some((p) => p.name === 'idempotency_key'), `${operation.operationId} takes an Idempotency-Key`);
  return expected.sort((a, b) => a.name.localeCompare(b.name));
}

test('the Python client declares every admin operation of the served document, with its parameters and its answer, and an error class for every reason', () =>
  withHarness({}, async (h) => {
    const document = (await h.get<OpenApiDocument>('/openapi.json')).body;
    const client = await describeClient();

    const admin = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => operation['x-permission'] !== undefined)
        .map(([method, operation]) => ({ path, method, operation })),
    );
    assert.ok(admin.length >= 16, `the document's admin operations (${admin.length})`);
    assert.equal(
      client.endpoints.map((e) => e.operationId).sort(),
      admin.map((a) => a.operation.operationId).sort(),
      'the client declares the admin operations of the document, and no other',
    );

    const problems: string[] = [];
    for (const { path, method, operation } of admin) {
      const endpoint = client.endpoints.find((e) => e.operationId === operation.operationId)!;
      assert.equal([endpoint.method, endpoint.path], [method.toUpperCase(), path], operation.operationId);
      assert.ok(endpoint.callable, `client.${endpoint.call} is a method`);
      const taken = endpoint.parameters.map(({ name, required }) => ({ name, required })).sort((a, b) => a.name.localeCompare(b.name));
      assert.equal(taken, expectedParameters(document, method, operation), `the parameters of client.${endpoint.call}`);
      assert.ok(endpoint.parameters.find((p) => p.name === 'idempotency_key')?.keywordOnly ?? true, `client.${endpoint.call}: idempotency_key is keyword-only`);
      const ok = operation.responses['200']?.content?.['application/json']?.schema;
      assert.ok(ok, `${operation.operationId} answers JSON`);
      problems.push(...differences(document, endpoint.answer, ok!, `client.${endpoint.call}()`));
    }
    problems.push(...differences(document, client.inputs.VipEntry!, { $ref: '#/components/schemas/VipEntry' }, 'VipEntry'));
    assert.equal(problems, [], 'answer types that differ from the document');

    assert.equal(Object.keys(client.reasons).sort(), Object.keys(ERROR_REASONS).sort(), 'an error class for each reason of the closed list');
    assert.ok(
      Object.values(client.reasons).every((r) => r.bridgeError),
      'each a BridgeError',
    );
    assert.is(client.reasons.outcome_unknown?.class, 'OutcomeUnknownError');
  }));

test.run();
