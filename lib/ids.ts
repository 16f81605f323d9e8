import { randomToken } from './keys';

/** Prefixed random ids: readable in logs and the Temporal UI, unguessable, never sequential. */
export function newId(
  prefix:
    | 'ws'
    | 'usr'
    | 'bot'
    | 'key'
    | 'run'
    | 'msg'
    | 'src'
    | 'trg'
    | 'dlv'
    | 'ntf'
    | 'act'
    | 'inv'
    | 'svr'
    | 'upl'
    | 'chq'
    | 'chk',
): string {
  return `${prefix}_${randomToken(20)}`;
}
