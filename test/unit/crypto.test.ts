import { decryptSecret, encryptSecret, isEncryptedSecret, type EncryptedSecret } from '../../shared/secrets/crypto';

/** Secrets at rest: AES-256-GCM under sha256(SECRETS_KEY), random iv, tampering and a wrong key detected. */
const KEY = 'a long random secrets key for the tests';
const PLAIN = 'whsec_3f9aB7c1D2e4F6g8H0';

const flip = (b64: string, at = 0) => {
  const b = Buffer.from(b64, 'base64');
  b[at] ^= 0x01;
  return b.toString('base64');
};

test('round trip, including empty, unicode and the longest accepted secret', () => {
  for (const plain of [PLAIN, '', 'contraseña-ñandú-🔐-секрет', 'x'.repeat(512)]) {
    const enc = encryptSecret(plain, KEY);
    expect(decryptSecret(enc, KEY)).toBe(plain);
  }
});

test('the record holds base64 parts (12-byte iv, 16-byte tag) and never the plain text', () => {
  const enc = encryptSecret(PLAIN, KEY);
  expect(Object.keys(enc).sort()).toEqual(['alg', 'data', 'iv', 'tag']);
  expect(enc.alg).toBe('aes-256-gcm');
  expect(Buffer.from(enc.iv, 'base64')).toHaveLength(12);
  expect(Buffer.from(enc.tag, 'base64')).toHaveLength(16);
  expect(Buffer.from(enc.data, 'base64')).toHaveLength(Buffer.byteLength(PLAIN));
  const serialized = JSON.stringify(enc);
  expect(serialized).not.toContain(PLAIN);
  expect(serialized).not.toContain(Buffer.from(PLAIN).toString('base64'));
  expect(isEncryptedSecret(enc)).toBe(true);
  expect(isEncryptedSecret({ ...enc, alg: 'aes-128-cbc' })).toBe(false);
  expect(isEncryptedSecret(null)).toBe(false);
});

test('every encryption uses a fresh iv: the same secret encrypts differently each time', () => {
  const a = encryptSecret(PLAIN, KEY);
  const b = encryptSecret(PLAIN, KEY);
  expect(a.iv).not.toBe(b.iv);
  expect(a.data).not.toBe(b.data);
  expect(decryptSecret(b, KEY)).toBe(PLAIN);
});

test('tampering with the data, the tag or the iv is detected', () => {
  const enc = encryptSecret(PLAIN, KEY);
  const altered: EncryptedSecret[] = [
    { ...enc, data: flip(enc.data) },
    { ...enc, data: flip(enc.data, 7) },
    { ...enc, tag: flip(enc.tag) },
    { ...enc, iv: flip(enc.iv) },
    { ...enc, data: Buffer.from(enc.data, 'base64').subarray(1).toString('base64') },
    { ...enc, data: encryptSecret('another secret value', KEY).data },
  ];
  for (const a of altered) expect(() => decryptSecret(a, KEY)).toThrow(/altered|another key/);
});

test('malformed records are refused', () => {
  const enc = encryptSecret(PLAIN, KEY);
  expect(() => decryptSecret({ ...enc, alg: 'aes-128-gcm' as never }, KEY)).toThrow(/Not an encrypted secret/);
  expect(() => decryptSecret({ ...enc, iv: Buffer.alloc(16).toString('base64') }, KEY)).toThrow(/bad iv or tag/);
  expect(() => decryptSecret({ ...enc, tag: Buffer.alloc(8).toString('base64') }, KEY)).toThrow(/bad iv or tag/);
  expect(() => decryptSecret(null as never, KEY)).toThrow(/Not an encrypted secret/);
});

test('a wrong key fails, and the error carries no part of the secret, the key or the record', () => {
  const enc = encryptSecret(PLAIN, KEY);
  let message = '';
  try {
    decryptSecret(enc, `${KEY}!`);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toMatch(/another key/);
  for (const part of [PLAIN, KEY, enc.data, enc.tag, enc.iv]) expect(message).not.toContain(part);
});

test('an empty secrets key is refused on both sides', () => {
  expect(() => encryptSecret(PLAIN, '')).toThrow(/SECRETS_KEY/);
  expect(() => decryptSecret(encryptSecret(PLAIN, KEY), '')).toThrow(/SECRETS_KEY/);
});
