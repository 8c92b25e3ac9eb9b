import { createHash, randomBytes } from 'node:crypto';
import { ObjectId } from 'mongodb';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A sortable id with a readable prefix: `csvimp_01JD3Q…`. Ten characters of millisecond time
 * (Crockford base32, so ids sort by creation) and sixteen of randomness (80 bits).
 */
export function newId(prefix: string, now = Date.now(), bytes: Uint8Array = randomBytes(16)): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let random = '';
  for (const b of bytes) random += CROCKFORD[b % 32];
  return `${prefix}_${time}${random}`;
}

/** A secret for keys and tokens: 32 random bytes, URL-safe. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/**
 * An ObjectId that is the same every time for the same name (sha-256, first 12 bytes): a retried
 * job step that creates documents gives them the ids its first attempt gave them.
 */
export function derivedObjectId(name: string): ObjectId {
  return new ObjectId(createHash('sha256').update(name).digest().subarray(0, 12));
}

/** An id of newId's form that is the same every time for the same name and time (see derivedObjectId). */
export function derivedId(prefix: string, name: string, at: Date): string {
  return newId(prefix, at.getTime(), createHash('sha256').update(name).digest().subarray(0, 16));
}
