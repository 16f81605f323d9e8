/**
 * Every limit, in one place: the contract's Limits table and the platform's own where the contract is silent. Routes,
 * validation, services and the OpenAPI document read them here; workflows get the ones they need in their input
 * or messages (workflow code imports nothing outside workflows/).
 */
/** Passages a chat turn gives the model. */
const PASSAGES_PER_TURN = 5;

export const LIMITS = {
  rateWindowSeconds: 60,
  rateGroups: {
    /** POST /chat, /chat/stream, /handoff, /knowledge, DELETE /knowledge/{id} */
    dialogue: 60,
    /** GET /messages, /knowledge, /knowledge/{id}, POST /typing, all /operator/* */
    reads: 240,
    /**
     * The widget (`/v1/widget/*`, docs/decisions/076-widget-callers.md), counted per (public key + IP): one
     * visitor sends a few messages a minute, but many visitors may share an address (an office, a mobile carrier).
     */
    widgetDialogue: 60,
    /**
     * Config, polling (a visitor polls every 2.5 s: 24 a minute), typing, and CORS preflights (a browser asks again
     * only for an address it has not asked about in 10 minutes: a poll's address changes with new messages): room for
     * a couple dozen visitors per IP.
     */
    widgetReads: 600,
    widgetUploads: 10,
  },
  bodyBytes: 1024 * 1024,
  knowledgeBodyBytes: 5 * 1024 * 1024,
  hookBodyBytes: 256 * 1024,
  messageChars: 8000,
  sessionIdChars: 128,
  /** Chat request fields the contract leaves unbounded (docs/decisions/README.md). */
  userTokenChars: 256,
  userAuthChars: 4096,
  pageContextChars: 4000,
  /** Messages of one poll response; the cursor brings the rest. */
  pollPageMessages: 200,
  /** Agent state is small working memory, not storage: 64 KiB of JSON. */
  agentStateBytes: 64 * 1024,
  /** Site scans listed in the dashboard. */
  scanList: { min: 1, max: 50, default: 20 },
  /** Webhook deliveries given up that an agent's page lists (to send again): how many, and of how many days. */
  failedDeliveries: { listed: 20, days: 30 },
  /** The inbox: saved replies a workspace keeps, and a title's length. */
  inbox: { savedReplies: 100, savedReplyTitleChars: 80 },
  /** Accounts (docs/decisions/084-accounts.md); counts are per minute. */
  account: {
    signupsPerAddress: 5,
    resetRequestsPerAddress: 5,
    resetRequestsPerAccount: 3,
    /**
     * Reset confirmations, e-mail confirmations, and invitation look-ups and acceptances, per client address: tokens
     * are not guessed.
     */
    tokenUsesPerAddress: 20,
    /** New links confirming a person's e-mail address, asked for again, per person and hour (the sign-up's not counted). */
    verificationResendsPerHour: 3,
    /** Invitations a workspace sends (revoked ones count: revoking does not buy more). */
    invitationsPerHour: 20,
    invitationsPerDay: 50,
    passwordMinChars: 10,
    passwordMaxChars: 1000,
    nameChars: 200,
    workspaceNameChars: 200,
  },
  /** Failed sign-ins per minute, per (e-mail, client address) and per client address (docs/decisions/054-sign-in-limits.md). */
  loginAttemptsPerAccount: 10,
  loginAttemptsPerAddress: 30,
  /**
   * Per account, across addresses: from this many failures in a row on, each further attempt waits a delay
   * (LOGIN_SLOWDOWN_SECONDS, doubling per failure, at most `loginSlowdownMaxSeconds`); a success clears the count, and so
   * do 15 minutes without an attempt.
   */
  loginSlowdownAfterFailures: 5,
  loginSlowdownMaxSeconds: 900,
  /**
   * Builder key pairing (docs/decisions/067-pairing-flow.md): a started pairing lives 10 minutes; once approved,
   * its client has at least 2 more minutes to collect the key. Starts and polls are counted per client address.
   */
  pairing: {
    lifetimeSeconds: 600,
    collectGraceSeconds: 120,
    /** Seconds a client should wait between polls (told in the start answer). */
    pollIntervalSeconds: 3,
    startsPerAddress: 10,
    pollsPerAddress: 120,
    /**
     * Looking a code up and approving it, per signed-in person a minute: a code is 8 letters, and a signed-in
     * stranger trying codes could join someone's client to their own workspace.
     */
    checksPerPerson: 30,
    deviceChars: 100,
  },
  /** The builder (contract, Limits: builder messages and turn; docs/decisions/075-builder-limits-and-failures.md). */
  builder: {
    /** `constructor` messages (and HTTP builder calls) per minute per workspace. */
    messagesPerMinute: 12,
    /** Handshake, tool list, `agents` and `incidents` per minute per workspace: more generous (contract). */
    readsPerMinute: 120,
    /**
     * POSTs to the MCP endpoint per minute per builder key, whatever they carry (notifications and batches too;
     * docs/decisions/135-mcp-request-budget.md): room for the reads and messages above, with their notifications.
     */
    mcpRequestsPerMinute: 240,
    /**
     * A JSON-RPC batch (protocol revision 2025-03-26 only): at most this many messages (as the SDK's transport), and
     * of them at most this many cancellations, each of which tells every API replica (a Postgres notification).
     */
    mcpBatchMessages: 100,
    mcpCancellationsPerRequest: 16,
    turnSeconds: 180,
    /** A call queued behind a running turn of its thread waits this long, then answers "busy". */
    queueWaitSeconds: 30,
    messageChars: 8000,
    threadChars: 200,
    /**
     * The line in square brackets naming what awaits confirmation, with the values it would write quoted
     * (docs/decisions/136-consent-shows-the-write.md): a text whole up to `consentQuoteChars` and `consentQuoteLines`,
     * longer ones by their first lines and a digest. The line's own bound is only a backstop.
     */
    summaryChars: 2000,
    consentQuoteChars: 200,
    consentQuoteLines: 3,
  },
  /** The visitor's widget (docs/widget.md). */
  widget: {
    /** An attached image, in bytes. */
    attachmentBytes: 5 * 1024 * 1024,
    /** How often the widget polls while open. */
    pollIntervalMs: 2_500,
    contactNameChars: 200,
    contactChars: 320,
    contactNoteChars: 2000,
    /** The widget's greeting and the team's name on people's replies (its look). */
    greetingChars: 300,
    teamNameChars: 80,
    /** A comment with the satisfaction score asked for after a resolution. */
    satisfactionCommentChars: 2000,
    /** Allowed origins per bot, and the length of one (a longer `Origin` on a widget call is 400). */
    allowedOrigins: 50,
    originChars: 300,
    /**
     * Where the widget runs (docs/decisions/134-widget-preflight-budget.md): origins it was only ever refused on, kept per
     * bot (anyone can send any `Origin` with the public key; allowed ones are always kept), and how long a sighting is
     * kept.
     */
    refusedSightingsPerBot: 50,
    sightingsKeptDays: 30,
  },
  /**
   * Visitors' images (docs/decisions/108-upload-quotas.md): how many a conversation holds, how many bytes
   * a bot takes in a day (rolling 24 hours) and a workspace keeps in all, and the largest picture accepted (a small
   * file can declare a huge one, which a viewer would try to decode). Retention: MEDIA_RETENTION_DAYS (default 90).
   */
  media: {
    imagesPerConversation: 20,
    botBytesPerDay: 50 * 1024 * 1024,
    workspaceBytesStored: 500 * 1024 * 1024,
    maxSidePixels: 8192,
    maxPixels: 40_000_000,
    /** Images deleted per maintenance run at most (the next run goes on). */
    retentionBatch: 500,
  },
  /** How long a cached answer is reused at most (docs/decisions/057-answer-cache.md). */
  answerCacheTtlHours: 24,
  /** Knowledge sources (not in the contract's table; chosen in docs/decisions/027-knowledge-source-api.md). */
  sourceIdChars: 200,
  sourceTitleChars: 1000,
  /**
   * Files uploaded into knowledge (docs/decisions/145-documents-in.md): the largest file, the most PDF pages read, and
   * the most text one file may hold once read (a pasted text's 5 MiB, in characters).
   */
  knowledgeFiles: {
    bytes: 20 * 1024 * 1024,
    maxPages: 500,
    textChars: 5_000_000,
    /** The multipart request around the file: its boundary, headers and the small fields. */
    envelopeBytes: 64 * 1024,
    /** A file's name as kept (its last path segment). */
    nameChars: 255,
  },
  /**
   * The owner's check of an agent (docs/decisions/155-owner-check.md): test questions an agent keeps and their length, a
   * note's length; the passages a question is judged on (a chat turn's: `passagesPerTurn`) and how
   * much of each is kept with a result; the runs kept per agent (older ones are deleted when a run starts) and listed.
   */
  checks: {
    questions: 100,
    questionChars: 1000,
    noteChars: 500,
    rankedPassages: 5,
    passageExcerptChars: 400,
    runsKept: 100,
    runList: { min: 1, max: 100, default: 30 },
  },
  /** The dashboard's knowledge list search (`q`): words of a title, an id or a source's text. */
  knowledgeSearchChars: 200,
  /**
   * What a question retrieves (`POST /v1/api/knowledge/search`, docs/decisions/153-see-what-the-agent-reads.md): passages
   * answered (a chat turn reads 5, the default), and the question's length (a chat message's).
   */
  knowledgeSearch: { min: 1, max: 20, default: PASSAGES_PER_TURN, queryChars: 8000 },
  passagesPerTurn: PASSAGES_PER_TURN,
  /** The answers of one conversation whose passages are listed (the test chat's "Passages read"). */
  passagesReadListed: 50,
  /**
   * A follow-up searched with what the conversation is about (docs/decisions/152-questions-in-context.md): the visitor's
   * earlier messages joined to it without a model, each cut to `turnChars`; with one, the messages the model reads to
   * write a standalone question, its answer's tokens and its time (at most a third of the turn's).
   */
  questionInContext: {
    visitorTurns: 2,
    turnChars: 300,
    rewriteMessages: 6,
    rewriteMaxTokens: 60,
    rewriteTimeoutMs: 3_000,
  },
  /** A trigger's run task text: a message's size. */
  triggerTaskChars: 8000,
  /** A site scan's start address. */
  scanUrlChars: 2048,
  pageSize: { min: 1, max: 200, default: 50 },
  idempotencyHours: 24,
  /**
   * The lease the request owning an `in_progress` key renews (every third of it) while it runs: a key whose owner
   * died is taken over this long after its last renewal at most.
   */
  idempotencyLeaseSeconds: 15,
  idempotencyKeyChars: 255,
  identityMaxAheadSeconds: 24 * 3600,
  operatorTypingMs: 6_000,
  triggerPauseAfterFailures: 5,
  scanMaxPages: { min: 1, max: 150, default: 1 },
  refreshDays: { min: 0, max: 180, default: 7 },
  /** A site scan's include and exclude path patterns (docs/decisions/151-sitemaps-and-path-patterns.md): each list. */
  scanPathPatterns: { count: 20, chars: 200 },
  /**
   * The sitemaps one scan reads: files (indexes and the sitemaps they list), bytes of one file (after gunzip; the
   * protocol allows 50 MB, which large sites split with an index), and page addresses taken from them in all.
   */
  scanSitemap: { files: 20, bytes: 10 * 1024 * 1024, urls: 10_000 },
} as const;

export type RateGroup = keyof typeof LIMITS.rateGroups;
/** Requests a minute per key + client address, by group: the contract's `rateGroups` unless configured (`rateLimitsOf`). */
export type RateLimits = Record<RateGroup, number>;
