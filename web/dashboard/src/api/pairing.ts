import type { PairingView } from '../../../shared/contract';
import { call, seg } from './client';

/** Builder key pairing, the owner's side (the /connect page): read a pending request and approve it. */
export type Pairing = PairingView;

export const pairing = {
  get: (code: string) => call<Pairing>('GET', `/v1/dashboard/mcp-pair/${seg(code)}`),
  approve: (code: string) => call<Pairing>('POST', `/v1/dashboard/mcp-pair/${seg(code)}/approve`),
};
