import { call } from './client';

/** The dashboard's builder conversation (owner and admins): one message at a time; answers can take a minute. */
export interface AssistantReply {
  reply: string;
  awaiting_confirmation?: string;
  busy?: true;
}

export const builder = {
  send: (message: string) => call<AssistantReply>('POST', '/v1/dashboard/assistant', { message }),
};
