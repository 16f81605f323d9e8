import type { Db } from '../db';
import type { MediaService } from '../media/service';
import type { SecretBox } from '../secret-box';
import type { DeltaHub } from '../streams/listener';
import type { Temporal } from '../temporal';

/**
 * What every conversation operation runs on (chat.ts, stream.ts, visitor.ts, operator.ts, erase.ts): built once per
 * process by lib/services.ts and passed to each operation as its first argument.
 */
export interface ConversationDeps {
  db: Db;
  temporal: Temporal;
  secrets: SecretBox;
  /** A chat turn that takes longer answers `llm_overloaded` (LLM_TURN_TIMEOUT_MS). */
  turnTimeoutMs: number;
  /**
   * Where the worker announces turns' fragments and outcomes (API processes, Postgres LISTEN); without it a turn's
   * outcome is the update's result.
   */
  deltaHub?: DeltaHub;
  /** Images visitors and operators attach: stored with their conversation, erased with it. */
  media: MediaService;
}
