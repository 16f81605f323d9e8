import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR } from '../../lib/migrate';
import { newBot, testDb } from '../support/helpers';
import { PNG_1X1, widgetCall, widgetSession } from '../support/widget';

/** The migration's Up part, as node-pg-migrate runs it. */
function upMigration(): string {
  const sql = readFileSync(path.join(MIGRATIONS_DIR, '1763805210000_image_messages_as_attachments.sql'), 'utf8');
  return sql.split('-- Down Migration')[0];
}

describe('image messages recorded with the [image] marker (docs/decisions/158-typed-replies.md)', () => {
  it('a visitor_message delivery recorded with the marker gets the attachment and an empty text', async () => {
    const bot = await newBot();
    const s = await widgetSession(bot);
    const up = await widgetCall(bot, `/v1/widget/attachments?session_id=${s.session_id}`, {
      rawBody: PNG_1X1,
      headers: { 'Content-Type': 'image/png' },
      token: s.visitor_token,
    });
    expect(up.status).toBe(201);
    const { attachment } = up.body.message as { attachment: { id: string; url: string } };
    // A failed delivery as the conversation workflow recorded it before: a person may send it again.
    const id = `dlv_legacy_${s.session_id.slice(0, 8)}`;
    const legacy = {
      event: 'visitor_message',
      bot_id: bot.bot_id,
      session_id: s.session_id,
      at: 1,
      text: `[image] ${attachment.url}`,
    };
    const db = testDb();
    await db.query(
      `INSERT INTO webhook_deliveries (id, bot_id, session_id, event, url, body, status)
       VALUES ($1, $2, $3, 'visitor_message', 'https://hooks.example.test/', $4, 'failed')`,
      [id, bot.bot_id, s.session_id, JSON.stringify(legacy)],
    );

    await db.query(upMigration());
    await db.query(upMigration()); // a second run changes nothing

    const row = await db.query<{ body: string }>(`SELECT body FROM webhook_deliveries WHERE id = $1`, [id]);
    const body = JSON.parse(row.rows[0]!.body) as Record<string, unknown>;
    expect(body.text).toBe('');
    expect(body.attachment).toEqual(up.body.message.attachment);
    expect(body).toMatchObject({ event: 'visitor_message', session_id: s.session_id, at: 1 });
  });
});
