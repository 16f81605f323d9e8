/**
 * The tokens of e-mailed links (password resets, invitations) are 40 letters and digits (lib/keys.ts randomToken);
 * fewer, or other characters, mean the link lost its end on the way (some e-mail programs cut long links), which the
 * page says at once instead of after the visitor typed a password. DOM-free.
 */
export const isWholeLinkToken = (token: string) => /^[A-Za-z0-9]{40}$/.test(token);
