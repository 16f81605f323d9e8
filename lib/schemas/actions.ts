import { z } from 'zod';

export const ActionCreate = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ and -, at most 64')
      .describe('The tool name the model sees'),
    description: z.string().trim().min(1).max(1000).describe('What the action does, for the model'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
    url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .describe('Called through the SSRF-safe client; private addresses are refused'),
    parameters: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments'),
    admin_only: z
      .boolean()
      .default(false)
      .describe('Only for a visitor confirmed as admin (identity confirmation role `admin`) and the owner'),
    requires_approval: z.boolean().default(false).describe("Each call waits for the owner's approval in the dashboard"),
  })
  .meta({ id: 'ActionCreate' });

export const ActionView = ActionCreate.extend({ id: z.string() }).meta({ id: 'Action' });
export const ActionList = z.object({ actions: z.array(ActionView) });
export const ApprovalParams = z.object({ id: z.string().min(1).max(64), aid: z.string().min(1).max(64) });
export const ActionParams = z.object({ id: z.string().min(1).max(64), action: z.string().min(1).max(64) });
export const ApprovalView = z
  .object({
    id: z.string(),
    run_id: z.string(),
    action: z.string(),
    arguments: z.unknown(),
    status: z.string(),
    created_at: z.number().int(),
  })
  .meta({ id: 'Approval' });
export const ApprovalList = z.object({ approvals: z.array(ApprovalView) });
export const ApprovalDecided = z.object({ id: z.string(), status: z.string() });
