import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, Connection } from '@temporalio/client';
import { searchAttributes } from '../../lib/temporal';
import {
  SearchAttributesMissingError,
  ensureSearchAttributes,
  unknownToVisibility,
} from '../../worker/search-attributes';
import type { Temporal } from '../../lib/temporal';
import { stackInfo } from '../support/stack-info';

/**
 * The worker's search attributes (temporal-config/search-attributes.json) when its credentials may not use the
 * operator service (Temporal Cloud, a restricted role): a visibility query tells which ones the namespace knows, and
 * if any is missing the worker stops with the names, types and commands to create them.
 */
describe('search attributes', () => {
  let connection: Connection;
  let temporal: Temporal;

  beforeAll(async () => {
    const info = stackInfo();
    connection = await Connection.connect({ address: info.temporalAddress });
    temporal = {
      connection,
      client: new Client({ connection, namespace: info.namespace }),
      namespace: info.namespace,
      taskQueue: info.taskQueue,
    };
  });

  afterAll(async () => connection?.close());

  it("are registered; a visibility query tells the namespace's from unknown ones", async () => {
    await ensureSearchAttributes(temporal);
    const wanted = { ...searchAttributes(), NotAPlatformAttribute: 'Keyword' };
    expect(await unknownToVisibility(temporal, wanted)).toEqual({ NotAPlatformAttribute: 'Keyword' });
  });

  it('a worker that may not add missing ones is told each name and type, and the commands to create them', () => {
    const message = new SearchAttributesMissingError('shop.a1b2c', { BotId: 'Keyword', RunStatus: 'Keyword' }).message;
    expect(message).toContain('BotId (Keyword), RunStatus (Keyword)');
    expect(message).toContain('permission denied');
    expect(message).toContain(
      'temporal operator search-attribute create --namespace shop.a1b2c --name BotId --name RunStatus --type Keyword',
    );
    expect(message).toContain(
      'tcld namespace search-attributes add --namespace shop.a1b2c --search-attribute BotId=Keyword --search-attribute RunStatus=Keyword',
    );
  });
});
