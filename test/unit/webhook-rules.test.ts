import { Webhook } from 'standardwebhooks';
import { MAX_ATTEMPTS, parseRetryAfter, RETRY_DELAYS_MS, retryDelay } from '../../shared/webhooks/delivery-rules';
import { signedHeaders, newSecret } from '../../shared/webhooks/signing';
import { addressAllowed, addressClass, callRefusal, urlRefusal } from '../../shared/webhooks/targets';
import { subscribes } from '../../shared/webhooks/catalog';

/** The pure rules of webhook delivery: the retry schedule, Retry-After, signing, target addresses. */

test('the schedule covers about three days, each delay within ±20 %', () => {
  const total = RETRY_DELAYS_MS.reduce((s, d) => s + d, 0);
  expect(total / 3600e3).toBeGreaterThan(60);
  expect(total / 3600e3).toBeLessThan(84);
  expect(MAX_ATTEMPTS).toBe(10);
  for (let failed = 1; failed < MAX_ATTEMPTS; failed++) {
    const base = RETRY_DELAYS_MS[failed - 1];
    expect(retryDelay(failed, 1, () => 0)).toBe(Math.round(base * 0.8));
    expect(retryDelay(failed, 1, () => 0.999999)).toBeLessThanOrEqual(Math.round(base * 1.2));
  }
  expect(retryDelay(MAX_ATTEMPTS, 1, () => 0.5)).toBeNull();
  expect(retryDelay(2, 0.001, () => 0.5)).toBe(300);
});

test('Retry-After (seconds or a date) replaces the schedule, up to a day', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');
  expect(parseRetryAfter('120', now)).toBe(120_000);
  expect(parseRetryAfter('Tue, 24 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
  expect(parseRetryAfter('soon', now)).toBeUndefined();
  expect(parseRetryAfter(undefined, now)).toBeUndefined();
  expect(retryDelay(1, 1, () => 0.5, 120_000)).toBe(120_000);
  // a Retry-After of two days is not waited for whole: the schedule applies
  expect(retryDelay(1, 1, () => 0.5, 48 * 3600e3)).toBe(5000);
  expect(retryDelay(MAX_ATTEMPTS, 1, () => 0.5, 1000)).toBeNull();
});

test('signatures verify with the Standard Webhooks library, under each secret of a rotation', () => {
  const [a, b] = [newSecret(), newSecret()];
  const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { id: 'x' } });
  const ts = Math.floor(Date.now() / 1000);
  const headers = signedHeaders([a, b], 'msg_1', ts, body);
  expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
  expect(new Webhook(a).verify(body, headers)).toMatchObject({ data: { id: 'x' } });
  expect(new Webhook(b).verify(body, headers)).toMatchObject({ data: { id: 'x' } });
  expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  expect(() => new Webhook(a).verify(body.replace('x', 'y'), headers)).toThrow();
});

test('target addresses by class and policy', () => {
  expect(addressClass('127.0.0.1')).toBe('loopback');
  expect(addressClass('::1')).toBe('loopback');
  expect(addressClass('::ffff:127.0.0.1')).toBe('loopback');
  for (const a of [
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    'fe80::1',
    'fd00::1',
    '0.0.0.0',
    '::',
  ])
    expect(addressClass(a)).toBe('internal');
  for (const a of ['93.184.216.34', '172.32.0.1', '2606:4700::1111']) expect(addressClass(a)).toBe('public');
  expect(addressAllowed('127.0.0.1', 'public')).toBe(false);
  expect(addressAllowed('127.0.0.1', 'loopback')).toBe(true);
  expect(addressAllowed('10.0.0.1', 'loopback')).toBe(false);
  expect(addressAllowed('10.0.0.1', 'private')).toBe(true);
  expect(urlRefusal('http://example.com/', { targets: 'public', allowHttp: false })).toMatch(/https/);
  expect(urlRefusal('http://example.com/', { targets: 'public', allowHttp: true })).toBeNull();
  // at call time, without DNS: an address written in the URL is judged; a name waits for the connect
  expect(callRefusal('https://10.0.0.1/x', { targets: 'loopback', allowHttp: false })).toMatch(/internal/);
  expect(callRefusal('https://[::1]/x', { targets: 'public', allowHttp: false })).toMatch(/loopback/);
  expect(callRefusal('https://[::1]/x', { targets: 'loopback', allowHttp: false })).toBeNull();
  expect(callRefusal('https://hooks.example.com/x', { targets: 'public', allowHttp: false })).toBeNull();
});

test('subscriptions: a type, or every type; test events only where addressed', () => {
  expect(subscribes(['*'], 'order.created')).toBe(true);
  expect(subscribes(['order.created'], 'order.updated')).toBe(false);
  expect(subscribes(['*'], 'webhook.test')).toBe(false);
});
