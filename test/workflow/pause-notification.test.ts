import { describe, expect, it } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { randomUUID } from 'node:crypto';
import { createTriggerActivities } from '../../activities/triggers';
import { createSafeFetch } from '../../lib/http/safe-fetch';
import { newBot, testDb } from '../support/helpers';

/**
 * Pausing a trigger is safe to retry (issue: one notification per pause whatever the retries, also with SMTP down):
 * the activity runs in Temporal's activity test environment, as a retry would run it, against the real database.
 */
describe('pauseTrigger and emailNotification', () => {
  async function pausedSetup() {
    const bot = await newBot();
    const tid = `trg_pause_${randomUUID().slice(0, 8)}`;
    await testDb().query(
      `INSERT INTO triggers (id, bot_id, workspace_id, kind, name, task) VALUES ($1, $2, $3, 'webhook', 'Orders', 'x')`,
      [tid, bot.bot_id, bot.workspace_id],
    );
    const resynced: string[] = [];
    const sent: string[] = [];
    let smtpUp = false;
    const activities = createTriggerActivities({
      db: testDb(),
      fetch: createSafeFetch({ allowLoopback: true }),
      mailer: {
        async send(to) {
          if (!smtpUp) throw new Error('connect ECONNREFUSED 127.0.0.1:25');
          sent.push(to);
        },
      },
      triggers: {
        reportRunOutcome: async () => undefined,
        resyncSchedule: async (id) => void resynced.push(id),
      },
    });
    return { bot, tid, activities, resynced, sent, smtpUp: () => (smtpUp = true) };
  }

  const info = { activityId: '7', workflowExecution: { workflowId: 'trigger/x', runId: 'run-of-health-workflow' } };

  it('a retried pause writes one notification, and SMTP being down does not fail it', async () => {
    const { bot, tid, activities, resynced } = await pausedSetup();
    const first = (await new MockActivityEnvironment(info).run(activities.pauseTrigger, {
      triggerId: tid,
      failures: 5,
    })) as { notificationId: string | null };
    const retried = await new MockActivityEnvironment({ ...info, attempt: 2 }).run(activities.pauseTrigger, {
      triggerId: tid,
      failures: 5,
    });
    expect(retried).toEqual(first);
    const notes = await testDb().query(`SELECT id, kind FROM notifications WHERE bot_id = $1`, [bot.bot_id]);
    expect(notes.rows).toEqual([{ id: first.notificationId, kind: 'trigger_paused' }]);
    const row = await testDb().query(`SELECT enabled, disabled_reason FROM triggers WHERE id = $1`, [tid]);
    expect(row.rows[0]).toEqual({ enabled: false, disabled_reason: 'failures' });
    expect(resynced).toEqual([tid, tid]);
  });

  it('the e-mail is a step of its own: it fails while SMTP is down, then is sent once', async () => {
    const { bot, tid, activities, sent, smtpUp } = await pausedSetup();
    const { notificationId } = (await new MockActivityEnvironment(info).run(activities.pauseTrigger, {
      triggerId: tid,
      failures: 5,
    })) as { notificationId: string | null };
    await expect(
      new MockActivityEnvironment(info).run(activities.emailNotification, { notificationId: notificationId! }),
    ).rejects.toThrow(/ECONNREFUSED/);
    smtpUp();
    expect(
      await new MockActivityEnvironment(info).run(activities.emailNotification, { notificationId: notificationId! }),
    ).toEqual({
      emailed: true,
    });
    expect(
      await new MockActivityEnvironment(info).run(activities.emailNotification, { notificationId: notificationId! }),
    ).toEqual({
      emailed: false,
    });
    expect(sent).toEqual([bot.email]);
  });
});
