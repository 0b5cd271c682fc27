// The event's `created` as the PostgreSQL adapter reads it: the server's text turned into the ISO
// string the port carries, the same as parsing it into a Date and writing that out.
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isoTimestamp } from '../../src/store/postgresPool.js';

const TIMESTAMPTZ_OID = 1184;
const throughDate = (text: string) => (pg.types.getTypeParser(TIMESTAMPTZ_OID, 'text') as (value: string) => Date)(text).toISOString();

const timestamps = suite('timestamptz as ISO strings');

timestamps("a UTC timestamp with any fraction: the Date's string, the fraction cut to milliseconds", () => {
  for (const text of [
    '2026-11-29 12:34:56+00',
    '2026-11-29 12:34:56.1+00',
    '2026-11-29 12:34:56.12+00',
    '2026-11-29 12:34:56.123+00',
    '2026-11-29 12:34:56.123456+00',
    '2026-11-29 23:59:59.999999+00',
    '0099-01-01 00:00:00.5+00',
  ]) {
    assert.is(isoTimestamp(text), throughDate(text), text);
  }
  assert.is(isoTimestamp('2026-11-29 12:34:56.123456+00'), '2026-11-29T12:34:56.123Z');
  assert.is(isoTimestamp('2026-11-29 12:34:56+00'), '2026-11-29T12:34:56.000Z');
});

timestamps('every six-digit fraction cut as a Date cuts it', () => {
  for (let f = 0; f < 1_000_000; f += 7) {
    const fraction = String(f).padStart(6, '0').replace(/0+$/, '');
    const text = `2026-11-29 12:34:56${fraction ? `.${fraction}` : ''}+00`;
    if (isoTimestamp(text) !== throughDate(text)) assert.unreachable(`${text}: ${isoTimestamp(text)} against ${throughDate(text)}`);
  }
});

timestamps('another offset, a year BC or past 9999: through a Date, the same instant in UTC', () => {
  for (const text of ['2026-11-29 18:04:56.123456+05:30', '2026-11-29 07:34:56.5-05', '2026-11-29 12:34:56+01:00:12', '10000-01-01 00:00:00+00', '0044-03-15 12:00:00+00 BC']) {
    assert.is(isoTimestamp(text), throughDate(text), text);
  }
  assert.is(isoTimestamp('2026-11-29 18:04:56.123456+05:30'), '2026-11-29T12:34:56.123Z');
});

timestamps.run();
