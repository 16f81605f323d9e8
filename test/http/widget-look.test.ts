/** The widget's look (docs/widget.md, "Its look"): set in the dashboard, validated, merged, and read by the widget. */
import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession } from '../support/helpers';
import { widgetCall } from '../support/widget';

const DEFAULT = { color: '#4f46e5', greeting: null, position: 'right', team_name: null, avatar_url: null };

describe("the widget's look", () => {
  it('starts as the widget’s own, takes what the owner sets field by field, and null puts a field back', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const patch = (widget_look: Record<string, unknown>) =>
      http(`/v1/dashboard/bots/${bot.bot_id}`, { method: 'PATCH', body: { widget_look }, headers: owner });
    expect((await widgetCall(bot, '/v1/widget/config')).body.look).toEqual(DEFAULT);

    const set = await patch({
      color: '#0F766E',
      greeting: '  Hello from Acme!  ',
      position: 'left',
      team_name: 'Acme support',
    });
    expect(set.status).toBe(200);
    expect(set.body.widget_look).toEqual({
      color: '#0f766e',
      greeting: 'Hello from Acme!',
      position: 'left',
      team_name: 'Acme support',
      avatar_url: null,
    });
    // Another field alone: the rest stays.
    const avatar = await patch({ avatar_url: 'https://cdn.example.com/acme.png' });
    expect(avatar.body.widget_look).toMatchObject({ color: '#0f766e', avatar_url: 'https://cdn.example.com/acme.png' });
    // Null (or an empty text) puts a field back to the widget's own.
    const reset = await patch({ greeting: '', position: null });
    expect(reset.body.widget_look).toMatchObject({ greeting: null, position: 'right', team_name: 'Acme support' });

    expect((await widgetCall(bot, '/v1/widget/config')).body.look).toEqual(reset.body.widget_look);
    expect((await http(`/v1/dashboard/bots/${bot.bot_id}`, { headers: owner })).body.widget_look).toEqual(
      reset.body.widget_look,
    );
  });

  it('refuses what is not a colour, an http avatar, a long greeting and unknown fields, changing nothing', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    for (const widget_look of [
      { color: 'red' },
      { color: '#fff' },
      { color: 'url(javascript:alert(1))' },
      { avatar_url: 'http://cdn.example.com/a.png' },
      { avatar_url: 'javascript:alert(1)' },
      { greeting: 'x'.repeat(301) },
      { team_name: 'y'.repeat(81) },
      { position: 'top' },
      { font: 'Comic Sans' },
    ]) {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}`, {
        method: 'PATCH',
        body: { widget_look },
        headers: owner,
      });
      expect([JSON.stringify(widget_look).slice(0, 40), res.status, res.body.code]).toEqual([
        JSON.stringify(widget_look).slice(0, 40),
        400,
        'bad_request',
      ]);
    }
    expect((await widgetCall(bot, '/v1/widget/config')).body.look).toEqual(DEFAULT);
  });
});
