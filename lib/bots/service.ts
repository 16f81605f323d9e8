import { bindTo } from '../bind-deps';
import { addBot, removeBot } from './lifecycle';
import { issueBuilderKey, listBuilderKeys, revokeBuilderKey, revokeBuilderKeys } from './builder-keys';
import type { BotDeps } from './deps';
import { findInWorkspace, getBot, listBots } from './lookup';
import { type RotatableKind, rotateKey } from './rotation';
import { modelChoices, updateBot } from './settings';
import { type AgentState, readState, writeState } from './state';

// What other resources do with keys inside their own transactions (sign-up, resets, the team), and the widget's look.
export { type BotKeys, createBot } from './lifecycle';
export { insertApiKey, revokeBuilderKeysIssuedBy } from './keys';
export { type RotatableKind, type RotatedKey, replaceWorkspaceKeys, rotateKey, rotateSeenKeys } from './rotation';
export { type WidgetLook, widgetLookOf } from './views';

/**
 * Bots and their keys (contract, Dashboard calls named as public for key handling): reading and changing an agent's
 * settings, issuing keys, and its state document. Every surface that acts for a workspace's member reaches a bot
 * through `findInWorkspace`, which answers 404 for another workspace's bot (never 403: nothing leaks). Each operation
 * lives in its own module (`lifecycle.ts`, `lookup.ts`, `settings.ts`, `builder-keys.ts`, `rotation.ts`) as a
 * function of the shared deps (`deps.ts`) and its arguments; here they are given the deps.
 */
export function createBotService(deps: BotDeps) {
  const bound = bindTo(deps);
  return {
    list: bound(listBots),
    create: bound(addBot),
    remove: bound(removeBot),
    modelChoices: bound(modelChoices),
    findInWorkspace: bound(findInWorkspace),
    get: bound(getBot),
    update: bound(updateBot),
    issueBuilderKey: bound(issueBuilderKey),
    listBuilderKeys: bound(listBuilderKeys),
    revokeBuilderKey: bound(revokeBuilderKey),
    revokeBuilderKeys: bound(revokeBuilderKeys),
    /** Issues a new key of one kind; the previous one stops working at once. The full value is in this answer only. */
    rotateKey: (botId: string, kind: RotatableKind, issuedBy: string | null = null) =>
      rotateKey(deps.db, deps.secrets, botId, kind, issuedBy),
    readState: (botId: string): Promise<AgentState> => readState(deps.db, botId),
    writeState: (botId: string, document: Record<string, unknown>, version: number): Promise<AgentState> =>
      writeState(deps.db, botId, document, version),
  };
}

export type BotService = ReturnType<typeof createBotService>;
