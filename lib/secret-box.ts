import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Signing secrets (`whsec_`, `idsec_`, trigger secrets) must be usable again by the platform to sign or verify,
 * so unlike API keys they cannot be stored as a hash. They are stored encrypted with AES-256-GCM under
 * SECRET_ENCRYPTION_KEY: a database dump alone does not reveal them.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
  /**
   * HMAC-SHA256 of `data` under a key derived from SECRET_ENCRYPTION_KEY for one `purpose` (HKDF): tokens the platform
   * hands out and later checks without storing them (a widget visitor's token), never usable for another purpose.
   */
  mac(purpose: string, data: string): Buffer;
}

export function createSecretBox(hexKey: string): SecretBox {
  const key = Buffer.from(hexKey, 'hex');
  if (key.length !== 32) throw new Error('SECRET_ENCRYPTION_KEY must be 32 bytes of hex');
  const macKeys = new Map<string, Buffer>();
  return {
    mac(purpose, data) {
      let macKey = macKeys.get(purpose);
      if (!macKey) {
        macKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `agent-platform mac ${purpose}`, 32));
        macKeys.set(purpose, macKey);
      }
      return createHmac('sha256', macKey).update(data, 'utf8').digest();
    },
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [
        'v1',
        iv.toString('base64url'),
        cipher.getAuthTag().toString('base64url'),
        body.toString('base64url'),
      ].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('Malformed sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
