// Per-address bounds count an IPv6 network, not an IPv6 address: a host given a /64 could
// otherwise rotate through 2^64 addresses. IPv4 peers reported by a dual-stack socket count as
// their IPv4 address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addressGroup } from '../../src/http/clientAddress.js';

test('IPv6 addresses inside one /64 are one key, whatever their spelling; another /64 is another', () => {
  const keys = new Set(['2001:db8:1:2::1', '2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:db8:1:2::1%eth0'].map((a) => addressGroup(a, 64)));
  assert.equal([...keys], ['2001:db8:1:2::/64']);
  assert.is.not(addressGroup('2001:db8:1:3::1', 64), addressGroup('2001:db8:1:2::1', 64));
});

test('the prefix length is configurable: /48 joins neighbouring /64s, /128 keeps single addresses', () => {
  assert.is(addressGroup('2001:db8:1:3::1', 48), addressGroup('2001:db8:1:2::1', 48));
  assert.is(addressGroup('2001:db8:1:2::1', 48), '2001:db8:1::/48');
  assert.is.not(addressGroup('2001:db8:1:2::1', 128), addressGroup('2001:db8:1:2::2', 128));
});

test('an IPv4-mapped IPv6 address is its IPv4 address, in either spelling', () => {
  assert.is(addressGroup('::ffff:192.0.2.7', 64), '192.0.2.7');
  assert.is(addressGroup('::ffff:c000:0207', 64), '192.0.2.7');
  assert.is(addressGroup('192.0.2.7', 64), '192.0.2.7');
});

test('what is not an IP address is its own key', () => {
  assert.is(addressGroup('', 64), '');
  assert.is(addressGroup('not:an:address', 64), 'not:an:address');
});

test.run();
