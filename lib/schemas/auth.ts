import { z } from 'zod';

export const LoginRequest = z
  .object({ email: z.string().min(3).max(320), password: z.string().min(1).max(1000) })
  .meta({ id: 'LoginRequest' });
export const LoginResponse = z
  .object({ user_id: z.string(), workspace_id: z.string(), email: z.string() })
  .meta({ id: 'LoginResponse' });
export const MeResponse = z
  .object({
    user: z.object({ id: z.string(), email: z.string(), role: z.enum(['owner', 'member']) }),
    workspace: z.object({ id: z.string(), name: z.string() }),
  })
  .meta({ id: 'SignedInUser' });
