import type { BuilderReply } from '../../../shared/contract';
import { call } from './client';

/** The dashboard's builder conversation (owner and admins): one message at a time; answers can take a minute. */
export const builder = {
  send: (message: string) => call<BuilderReply>('POST', '/v1/dashboard/assistant', { message }),
};
