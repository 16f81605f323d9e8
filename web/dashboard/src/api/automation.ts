import { call, query, seg } from './client';

/** Triggers, the run log, actions and approvals of one agent (lib/schemas/triggers.ts, actions.ts, dashboard.ts). */

export type TriggerKind = 'webhook' | 'schedule' | 'poll' | 'manual';

export interface Trigger {
  id: string;
  bot_id: string;
  kind: TriggerKind | string;
  name: string;
  task: string;
  mode: 'ack' | 'wait' | string;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  hook_url: string | null;
  secret_fingerprint: string | null;
  schedule: { cron: string | null; every_seconds: number | null } | null;
  poll: { url: string; every_seconds: number | null } | null;
  created_at: number;
}

export interface TriggerCreate {
  kind: TriggerKind;
  name?: string;
  task: string;
  mode?: 'ack' | 'wait';
  enabled?: boolean;
  schedule?: { cron?: string; every_seconds?: number };
  poll?: { url: string; every_seconds: number };
}

export interface Run {
  run_id: string;
  status: 'running' | 'done' | 'failed' | 'skipped' | string;
  trigger_kind: string;
  trigger_id: string | null;
  session_id: string | null;
  input: string;
  answer: string | null;
  error_code: string | null;
  error: string | null;
  model: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  credits: number;
  started_at: number;
  finished_at: number | null;
  workflow_url: string;
}

export interface Action {
  id: string;
  name: string;
  description: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  parameters: Record<string, unknown>;
  admin_only: boolean;
  requires_approval: boolean;
}

export type ActionCreate = Omit<Action, 'id'>;

export interface Approval {
  id: string;
  run_id: string;
  action: string;
  arguments: unknown;
  status: string;
  created_at: number;
}

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
