import { constantTimeEqual } from '../keys';
import type { SecretBox } from '../secret-box';

/**
 * A widget conversation belongs to the browser that started it (docs/widget.md). The public key is in every page, so
 * it proves nothing about who asks; the visitor token does: an HMAC of (bot, session) under a key derived from
 * SECRET_ENCRYPTION_KEY, handed out with the session id and checked on every call about that session. Nothing is
 * stored (a session costs nothing until its first message), and no token opens another bot's or another session's
 * conversation.
 */
const PURPOSE = 'widget-visitor';
const PREFIX = 'vt_';

export function visitorToken(box: SecretBox, botId: string, sessionId: string): string {
  // JSON keeps the pair unambiguous whatever characters a session id holds.
  return PREFIX + box.mac(PURPOSE, JSON.stringify([botId, sessionId])).toString('base64url');
}

export function visitorTokenMatches(
  box: SecretBox,
  botId: string,
  sessionId: string,
  token: string | undefined,
): boolean {
  if (!token) return false;
  return constantTimeEqual(visitorToken(box, botId, sessionId), token);
}
