/**
 * A site scan of a bot: crawl, index, and the weekly refresh.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export interface SiteScanInput {
  botId: string;
  workspaceId: string;
  /** Start address, already normalized and checked by the API. */
  url: string;
  /** 1–150, already clamped by the API (contract, Limits). */
  maxPages: number;
  /**
   * Path patterns, already checked by the API (docs/decisions/151-sitemaps-and-path-patterns.md). Absent in inputs written
   * before they existed (histories, Schedules): none.
   */
  include?: string[];
  exclude?: string[];
  trigger: 'api' | 'schedule';
  /** Crawler budget per page; absent = the crawler's default (10 s). Tests shorten it. */
  pageTimeoutMs?: number;
}

export interface SiteScanSummary {
  status: 'done' | 'failed';
  fetched: number;
  indexed: number;
  skipped: number;
  removed: number;
  /** Why nothing was indexed (unreachable, blocked, no text). */
  error?: string;
}

/** What a run started by the refresh Schedule did: handed over to `scan/{botId}`, or found a scan running. */
export interface SiteScanHandoff {
  status: 'started' | 'skipped';
  workflowId: string;
}

/** One scan per bot: the id's uniqueness is the contract's 409 (docs/architecture.md, Workflows). */
export function siteScanWorkflowId(botId: string): string {
  return `scan/${botId}`;
}

export function siteScanSearchAttributes(input: Pick<SiteScanInput, 'botId' | 'workspaceId'>) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId] };
}
