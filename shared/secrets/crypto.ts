import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets the service keeps for tenants (channel signing secrets) are stored only in this form:
 * AES-256-GCM under sha256(SECRETS_KEY), a random 12-byte iv per encryption, the 16-byte tag
 * authenticating the ciphertext. Every part is base64. Nothing here ever puts the plain text, the
 * key or the ciphertext in an error message.
 */
export interface EncryptedSecret {
  alg: 'aes-256-gcm';
  iv: string;
  tag: string;
  data: string;
}

const ALG = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyOf(secretsKey: string): Buffer {
  if (typeof secretsKey !== 'string' || secretsKey.length === 0)
    throw new Error('The secrets key is empty: set SECRETS_KEY');
  return createHash('sha256').update(secretsKey, 'utf8').digest();
}

export function encryptSecret(plain: string, secretsKey: string): EncryptedSecret {
  if (typeof plain !== 'string') throw new TypeError('Only a string secret can be encrypted');
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALG, keyOf(secretsKey), iv, { authTagLength: TAG_BYTES });
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return {
    alg: ALG,
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** The plain text; throws when the record is malformed, was altered, or was made under another key. */
export function decryptSecret(enc: EncryptedSecret, secretsKey: string): string {
  if (!isEncryptedSecret(enc)) throw new Error('Not an encrypted secret of this service');
  const iv = Buffer.from(enc.iv, 'base64');
  const tag = Buffer.from(enc.tag, 'base64');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES)
    throw new Error('Not an encrypted secret of this service (bad iv or tag)');
  const decipher = createDecipheriv(ALG, keyOf(secretsKey), iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(enc.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    // node's message is generic, but keep ours fixed: no part of the record goes into it
    throw new Error('The secret cannot be decrypted: it was altered or encrypted under another key');
  }
}

/** Whether a stored value has the shape of an EncryptedSecret (not whether it decrypts). */
export function isEncryptedSecret(value: unknown): value is EncryptedSecret {
  const v = value as Partial<EncryptedSecret> | null;
  return (
    !!v &&
    typeof v === 'object' &&
    v.alg === ALG &&
    typeof v.iv === 'string' &&
    typeof v.tag === 'string' &&
    typeof v.data === 'string'
  );
}
