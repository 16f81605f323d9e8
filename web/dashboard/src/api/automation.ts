import type { ActionView, ApprovalView, RunView, TriggerCreate, TriggerView } from '../../../shared/contract';
import { call, query, seg } from './client';

/** Triggers, the run log, actions and approvals of one agent (lib/schemas/triggers.ts, actions.ts, dashboard.ts). */

export type { TriggerCreate } from '../../../shared/contract';
export type TriggerKind = TriggerCreate['kind'];

export type Trigger = TriggerView;

export type Run = RunView;

export type Action = ActionView;

export type ActionCreate = Omit<Action, 'id'>;

export type Approval = ApprovalView;

const bot = (id: string) => `/v1/dashboard/bots/${seg(id)}`;

export const automation = {
  triggers: (id: string) => call<{ triggers: Trigger[] }>('GET', `${bot(id)}/triggers`),
  createTrigger: (id: string, body: TriggerCreate) =>
    call<Trigger & { secret?: string }>('POST', `${bot(id)}/triggers`, body),
  setTriggerEnabled: (id: string, tid: string, enabled: boolean) =>
    call<Trigger>('POST', `${bot(id)}/triggers/${seg(tid)}/${enabled ? 'enable' : 'disable'}`),
  removeTrigger: (id: string, tid: string) => call<unknown>('DELETE', `${bot(id)}/triggers/${seg(tid)}`),
  runTrigger: (id: string, tid: string, body?: string) =>
    call<{ status: 'accepted' | 'done'; run_id: string; answer?: string }>(
      'POST',
      `${bot(id)}/triggers/${seg(tid)}/run`,
      body ? { body } : {},
    ),

  runs: (id: string, cursor?: string, limit = 20) =>
    call<{ runs: Run[]; next_cursor: string }>('GET', `${bot(id)}/runs${query({ limit, cursor })}`),

  actions: (id: string) => call<{ actions: Action[] }>('GET', `${bot(id)}/actions`),
  createAction: (id: string, body: ActionCreate) => call<Action>('POST', `${bot(id)}/actions`, body),
  removeAction: (id: string, name: string) => call<unknown>('DELETE', `${bot(id)}/actions/${seg(name)}`),
  approvals: (id: string) => call<{ approvals: Approval[] }>('GET', `${bot(id)}/approvals`),
  decide: (id: string, aid: string, approve: boolean) =>
    call<{ id: string; status: string }>('POST', `${bot(id)}/approvals/${seg(aid)}/${approve ? 'approve' : 'reject'}`),
};
