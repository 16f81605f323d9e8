/** How an outbound request through the SSRF-safe client (lib/http/safe-fetch.ts) failed. */
export type OutboundErrorCode = 'timeout' | 'too_large' | 'network' | 'too_many_redirects' | 'bad_url';

/** Refused by policy (address class, scheme, credentials). Final: retrying cannot succeed. */
export class OutboundBlockedError extends Error {
  readonly code = 'outbound_blocked' as const;
  constructor(
    readonly reason: string,
    message: string,
    /** The refused address, when the refusal is about an address. */
    readonly address?: string,
  ) {
    super(message);
    this.name = 'OutboundBlockedError';
  }
}

/** Anything else that went wrong; callers branch on `code` ('network' and 'timeout' are worth retrying). */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}
