import type { AppDeps } from '../deps';
import type { RouteDef } from '../route';
import { conversationRoutes } from './conversation';
import { knowledgeRoutes } from './knowledge';
import { operatorRoutes } from './operator';
import { scanRoutes } from './scan';

/** Every route under `/v1/api/*` and `/v1/admin/*`, in the order they appear in the reference. */
export function apiRoutes(deps: AppDeps): RouteDef[] {
  return [...conversationRoutes(deps), ...knowledgeRoutes(deps), ...operatorRoutes(deps), ...scanRoutes(deps)];
}
