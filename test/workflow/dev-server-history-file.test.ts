import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../stack/processes';
import { type TemporalDevServer, startTemporalDev } from '../../stack/temporal-dev';

/** SQLite's file header: bytes 18 and 19 are the write and read versions, 2 for a database in WAL mode, 1 otherwise. */
function journalVersions(file: string): [number, number] {
  const header = Buffer.alloc(100);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  return [header[18], header[19]];
}

describe("the dev server's history file (npm start: stack/temporal-dev.ts)", () => {
  let server: TemporalDevServer | undefined;
  let dir: string | undefined;

  afterEach(async () => {
    await server?.stop();
    server = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is a write-ahead log synced at checkpoints, not a rollback journal with an fsync per write', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'dev-server-history-'));
    const dbFile = path.join(dir, 'temporal.db');
    server = await startTemporalDev({ port: await freePort(), dbFile, headless: true, quiet: true });
    // A write through the server (a workflow started, no worker needed), so the file has been opened for writing.
    const connection = await Connection.connect({ address: server.address });
    try {
      await new Client({ connection }).workflow.start('noSuchWorkflow', {
        taskQueue: `history-file-${process.pid}`,
        workflowId: `history-file-${process.pid}`,
      });
    } finally {
      await connection.close();
    }
    expect(journalVersions(dbFile)).toEqual([2, 2]);
    // synchronous is per connection, not kept in the file: the server is told it on its command line.
    const args = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0');
    const pragmas = args.flatMap((a, i) => (args[i - 1] === '--sqlite-pragma' ? [a] : []));
    expect(pragmas).toEqual(expect.arrayContaining(['journal_mode=WAL', 'synchronous=NORMAL']));
  }, 120_000);
});
