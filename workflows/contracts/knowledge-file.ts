/**
 * The reading of one uploaded file into a bot's knowledge (docs/decisions/145-documents-in.md).
 * The contract between the knowledge service (client side), the workflow and its activity: nothing here may import
 * Node built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

/** How often the reading activity says it is alive (it beats on a timer, whatever step it is in). */
export const FILE_HEARTBEAT_MS = 5_000;

export interface KnowledgeFileInput {
  botId: string;
  workspaceId: string;
  sourceId: string;
  /** The upload this reading is of: its index write happens only while it is still the source's upload. */
  uploadId: string;
}

export interface KnowledgeFileResult {
  /** `superseded`: a newer upload of the source (or its deletion) came first; this reading wrote nothing. */
  status: 'indexed' | 'failed' | 'superseded';
  passages?: number;
  pages?: number;
  /** Why the file could not be read, in words for its owner. */
  reason?: string;
}

/**
 * One reading per source at a time: a new upload of the source replaces a reading still running (the service starts
 * it with TERMINATE_EXISTING), and the Temporal UI finds a source's readings under one id.
 */
export function knowledgeFileWorkflowId(botId: string, sourceId: string): string {
  return `knowledge-file/${botId}/${sourceId}`;
}

export function knowledgeFileSearchAttributes(input: Pick<KnowledgeFileInput, 'botId' | 'workspaceId'>) {
  return { BotId: [input.botId], WorkspaceId: [input.workspaceId] };
}
