// The served OpenAPI document as a game-server developer uses it: TypeScript types generated from
// it with openapi-typescript accept ordinary requests (and refuse broken ones), a linter with its
// recommended rules finds no error, and the realtime frames it names are what the stream sends.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { LoginFrame, MessageFrame, PbConnectFrame } from '../../src/contract/answers.js';
import { connect, signIn } from '../support/streamsAndSignIn.js';
import { ALICE, withHarness } from '../support/harness.js';
import type { OpenApiDocument } from '../support/openApiDocument.js';

const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

/** Ordinary requests as a developer writes them against the generated types; each `@ts-expect-error` line must fail to compile. */
const ORDINARY_REQUESTS = `
import type { components, paths } from './api.js';

type JsonBody<P extends keyof paths> = paths[P] extends { post: { requestBody?: { content: { 'application/json': infer B } } } } ? B : never;
type Ok<P extends keyof paths, M extends 'get' | 'post'> = paths[P] extends Record<M, { responses: { 200: { content: { 'application/json': infer A } } } }> ? A : never;

export const push: JsonBody<'/adm/message/push'> = { oIds: ['1630399136785'], name: 'reward', data: { gold: 100, items: ['sword'], nested: { level: 3 } } };
export const pushByUserIds: JsonBody<'/adm/message/push'> = { userIds: ['u1'], name: 'ping', data: {} };
export const points: JsonBody<'/adm/points/edit'> = { oId: '1630399136785', point: -7, memo: 'shop' };
export const medal: JsonBody<'/adm/medal/give'> = { oId: '1630399136785', name: 'Hero', description: 'won', attr: 'url=https://x.test/m.png&backcolor=ffffff&fontcolor=000000' };
export const vip: JsonBody<'/adm/vip/submit'> = { oId: '1630399136785', quality: 'svip', expired: '2027-01-01 00:00:00' };
export const batch: JsonBody<'/adm/vip/batch-submit'> = { oId: '1630399136785', vips: [{ quality: 'vip', expired: '2027-01-01 00:00:00' }] };

// @ts-expect-error a points edit needs its memo
export const noMemo: JsonBody<'/adm/points/edit'> = { oId: '1630399136785', point: 7 };
// @ts-expect-error a VIP quality is vip or svip
export const badQuality: JsonBody<'/adm/vip/submit'> = { oId: '1630399136785', quality: 'gold', expired: '2027-01-01 00:00:00' };

export function readAnswers(pushed: Ok<'/adm/message/push', 'post'>, edited: Ok<'/adm/points/edit', 'post'>, list: Ok<'/adm/vip/{oId}', 'get'>): string[] {
  return [...pushed.data.online, edited.data?.transactionId ?? edited.msg, ...list.data.map((record) => record.quality)];
}

export function readFrames(hello: components['schemas']['PbConnectFrame'], login: components['schemas']['LoginFrame'], message: components['schemas']['MessageFrame']): unknown[] {
  return [hello.client_id, hello.user?.oId, login.user.nickname, message.data.gold];
}
`;

test('openapi-typescript types from the served document accept ordinary requests and refuse broken ones', () =>
  withHarness({}, async (h) => {
    const document = (await h.get('/openapi.json')).body;
    const dir = await mkdtemp(join(tmpdir(), 'community-bridge-client-'));
    try {
      await writeFile(join(dir, 'api.ts'), astToString(await openapiTS(document)));
      await writeFile(join(dir, 'requests.ts'), ORDINARY_REQUESTS);
      const options = ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck'];
      const compiled = spawnSync(process.execPath, [TSC, ...options, join(dir, 'requests.ts')], { encoding: 'utf8' });
      assert.is(compiled.status, 0, `tsc:\n${compiled.stdout}${compiled.stderr}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }));

test('the document has no error under the recommended rules of a linter, names its server and marks every public operation', () =>
  withHarness({ PUBLIC_URL: 'https://bridge.example.test' }, async (h) => {
    const document = (await h.get<OpenApiDocument>('/openapi.json')).body;
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: `${h.url}/openapi.json`,
      config: await createConfig({ extends: ['recommended'] }),
    });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    assert.equal(errors, []);
    assert.equal(document.servers, [{ url: 'https://bridge.example.test', description: 'this service' }]);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        assert.ok(Array.isArray(operation.security), `${method} ${path} states its security`);
        // A generated client types each success body from its schema. Redirects (3xx, the login
        // page's 302) are followed, not read, and a 204 has no body by definition: neither needs one.
        const successes = Object.entries(operation.responses).filter(([status]) => /^2\d\d$/.test(status) && status !== '204');
        assert.ok(successes.length > 0, `${method} ${path} documents a success`);
        for (const [status, response] of successes) {
          const media = Object.entries(response.content ?? {});
          assert.ok(media.length > 0, `${method} ${path} ${status} has content`);
          for (const [mediaType, entry] of media) {
            assert.ok(entry.schema && Object.keys(entry.schema).length > 0, `${method} ${path} ${status} ${mediaType} has a schema`);
          }
        }
      }
    }
    const stream = document.paths['/api/realtime']!.get!.responses['200']!.content!['text/event-stream']!.schema!;
    assert.equal(
      stream.items!.oneOf!.map((e) => [e.properties!.event!.const, e.properties!.data!.$ref]),
      [
        ['PB_CONNECT', '#/components/schemas/PbConnectFrame'],
        ['login', '#/components/schemas/LoginFrame'],
        ['message', '#/components/schemas/MessageFrame'],
      ],
    );
  }));

test('the frames the stream sends have the documented shapes', () =>
  withHarness({}, async (h) => {
    const { key } = await h.key(['message:push']);
    const { stream, hello, clientId } = await connect(h);
    try {
      const check = (schema: v.GenericSchema, data: unknown) => {
        const parsed = v.safeParse(schema, data);
        assert.ok(parsed.success, `${JSON.stringify(data)}: ${JSON.stringify(parsed.issues)}`);
      };
      check(PbConnectFrame, hello.data);
      await signIn(h, clientId, ALICE.oId);
      check(LoginFrame, (await stream.next('login')).data);
      assert.is((await h.post('/adm/message/push', { oIds: [ALICE.oId], name: 'reward', data: { gold: 100, nested: { a: [1] } } }, key)).status, 200);
      const message = await stream.next('message');
      check(MessageFrame, message.data);
      assert.equal(message.data.data, { gold: 100, nested: { a: [1] } });
    } finally {
      stream.close();
    }
  }));

test.run();
