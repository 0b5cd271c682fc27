import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseSpecDateTime, toSpecTimestamp } from '../../src/domain/time.js';

test('the input form YYYY-MM-DD HH:MM:SS is read as UTC', () => {
  assert.is(parseSpecDateTime('2025-03-01 12:34:56'), '2025-03-01T12:34:56.000Z');
  assert.is(parseSpecDateTime('2025-12-31 23:59:59'), '2025-12-31T23:59:59.000Z');
  assert.is(parseSpecDateTime('2025-01-01 00:00:00'), '2025-01-01T00:00:00.000Z');
});

test('a leap day of a leap year is accepted', () => {
  assert.is(parseSpecDateTime('2024-02-29 00:00:00'), '2024-02-29T00:00:00.000Z');
  assert.is(parseSpecDateTime('2000-02-29 10:00:00'), '2000-02-29T10:00:00.000Z');
});

test('impossible dates and times are rejected', () => {
  for (const text of [
    '2025-02-30 00:00:00',
    '2025-02-29 00:00:00', // not a leap year
    '1900-02-29 00:00:00', // not a leap year either
    '2025-04-31 00:00:00',
    '2025-13-01 00:00:00',
    '2025-00-10 00:00:00',
    '2025-01-00 00:00:00',
    '2025-01-32 00:00:00',
    '2025-01-01 24:00:00',
    '2025-01-01 23:60:00',
    '2025-01-01 23:59:60',
  ]) {
    assert.is(parseSpecDateTime(text), null, text);
  }
});

test('other shapes are rejected', () => {
  for (const text of [
    '',
    '2025-03-01',
    '2025-03-01 12:34',
    '2025-03-01T12:34:56',
    '2025-03-01T12:34:56Z',
    '2025-03-01 12:34:56Z',
    '2025-03-01 12:34:56.000',
    '2025-03-01 12:34:56.000Z',
    '2025-3-1 12:34:56',
    '25-03-01 12:34:56',
    ' 2025-03-01 12:34:56',
    '2025-03-01 12:34:56 ',
    '2025-03-01  12:34:56',
    '2025/03/01 12:34:56',
    'tomorrow',
    '２０２５-03-01 12:34:56',
  ]) {
    assert.is(parseSpecDateTime(text), null, JSON.stringify(text));
  }
});

test('answers use YYYY-MM-DD HH:MM:SS.mmmZ', () => {
  assert.is(toSpecTimestamp('2025-03-01T12:34:56.000Z'), '2025-03-01 12:34:56.000Z');
  assert.is(toSpecTimestamp('2025-03-01T12:34:56.789Z'), '2025-03-01 12:34:56.789Z');
  assert.is(toSpecTimestamp(parseSpecDateTime('2024-02-29 23:59:59')!), '2024-02-29 23:59:59.000Z');
});

test.run();
