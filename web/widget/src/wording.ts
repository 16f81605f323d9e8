import type { Failure } from './api';
import type { StreamFrame } from '../../shared/sse';
import { LIMITS } from '../../shared/contract';
import { awayLine } from './hours';
import type { State } from './state';

/** What the widget says about the conversation, failures and images, in the visitor's words. DOM-free. */

/** Handed over outside the team's hours, and they are not back yet: nobody is coming now. */
export function teamAway(state: State): boolean {
  const backAt = state.afterHours?.backAt;
  return state.status === 'waiting' && !!state.afterHours && (backAt === null || backAt! > Date.now());
}

/** The line under the title: where the conversation stands with a person (contract, Poll response). */
export function statusLine(state: State): string {
  if (state.status === 'operator') return 'You are chatting with a person';
  if (state.status === 'waiting' && state.operatorHere) return 'Someone from the team is reading';
  if (teamAway(state)) return awayLine(state.afterHours!.backAt);
  if (state.status === 'waiting') return 'Waiting for a person…';
  if (state.unavailable) return 'Unavailable';
  if (!state.config) return 'Connecting…';
  return 'We usually answer right away';
}

export const ACCEPTED_IMAGES = 'image/png,image/jpeg,image/gif,image/webp';

/** Why an image cannot be sent, said before sending it (its type, its size), or undefined when it can. */
export function imageProblem(
  file: { type: string; size: number },
  limits: { max_bytes: number; types?: string[] } | undefined,
): string | undefined {
  const types = limits?.types?.length ? limits.types : ACCEPTED_IMAGES.split(',');
  if (!types.includes(file.type)) return 'Only PNG, JPEG, GIF or WebP images can be sent.';
  if (limits && file.size > limits.max_bytes) {
    return `That image is too large (${megabytes(file.size, Math.ceil)}). Images can be up to ${megabytes(limits.max_bytes)}.`;
  }
  return undefined;
}

/** What the API's refusal of an image means for the visitor (413, 415), or undefined for another failure. */
export function uploadRefusal(status: number, limits: { max_bytes: number } | undefined): string | undefined {
  if (status === 413) return `That image is too large. Images can be up to ${megabytes(limits?.max_bytes)}.`;
  if (status === 415) return 'That file is not an image we can take: send a PNG, JPEG, GIF or WebP.';
  return undefined;
}

/** Sizes for people: a file over the limit rounds up and the limit rounds down, so "5.1 MB" is never "up to 5 MB". */
export function megabytes(
  bytes: number = LIMITS.widget.attachmentBytes,
  round: (n: number) => number = Math.floor,
): string {
  return `${round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}

export function describeFailure(f: Failure): string {
  if (f.code === 'rate_limited' || f.status === 429) {
    return `You're sending messages too fast — try again in ${f.retryAfter ?? 60} s.`;
  }
  if (f.status === 0) return 'The chat service cannot be reached. Check your connection.';
  if (f.code === 'llm_overloaded') return `The assistant is busy — try again in ${f.retryAfter ?? 10} s.`;
  if (f.code === 'llm_unavailable') return 'The assistant is unavailable right now. Please try again later.';
  // A part of the service is briefly out of reach (a restart, a blip): nothing is wrong with the message.
  if (f.code === 'service_unavailable') return `The chat is briefly unavailable — try again in ${f.retryAfter ?? 5} s.`;
  if (f.status >= 500) return 'Something went wrong on our side. Please try again.';
  return f.message;
}

/** A stream that ended in an error while its turn goes on: the answer comes through the poll. */
export const ANSWER_PENDING = 'The answer is taking longer than usual. It will appear here when it is ready.';

export function describeStreamError(e: Extract<StreamFrame, { type: 'error' }>): string {
  if (e.code === 'llm_overloaded') return `The assistant is busy — try again in ${e.retryAfter ?? 10} s.`;
  if (e.code === 'llm_unavailable') return 'The assistant is unavailable right now. Please try again later.';
  return 'The answer could not be completed. Please try again.';
}
