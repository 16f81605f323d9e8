/** The inbox's rules apart from the DOM (web/dashboard/src/pages/inbox/model.ts). */
import { describe, expect, it, jest } from '@jest/globals';
// The dashboard's sources are an ES module package: the type from there, the code through Jest.
import type * as Model from '../../web/dashboard/src/pages/inbox/model.js' with { 'resolution-mode': 'import' };

const {
  addressOf,
  announcementOf,
  arrivalsAnnouncement,
  assigneeLabel,
  authorLabel,
  clip,
  contactHref,
  preview,
  statusInfo,
  statusesOf,
  viewFrom,
  visitorName,
} = jest.requireActual<typeof Model>('../../web/dashboard/src/pages/inbox/model');

describe('the inbox, apart from the page', () => {
  it('keeps its view in the address, and reads it back', () => {
    const view = { status: 'all' as const, agent: 'bot_1', bot: 'bot_1', session: 'sess 1' };
    const address = addressOf(view);
    expect(address).toBe('/inbox?status=all&agent=bot_1&bot=bot_1&session=sess+1');
    expect(viewFrom(new URLSearchParams(address.split('?')[1]))).toEqual(view);
    expect(addressOf({ status: 'open', agent: '', bot: '', session: '' })).toBe('/inbox');
    // A conversation needs both its agent and its session.
    expect(addressOf({ status: 'open', agent: '', bot: 'bot_1', session: '' })).toBe('/inbox');
    expect(viewFrom(new URLSearchParams('status=nonsense'))).toMatchObject({ status: 'open' });
    // The requests assigned to the signed-in person.
    expect(addressOf({ status: 'mine', agent: '', bot: '', session: '' })).toBe('/inbox?status=mine');
    expect(viewFrom(new URLSearchParams('status=mine'))).toMatchObject({ status: 'mine' });
  });

  it('names who wrote a message: the agent, the visitor, the team member who replied, else the team', () => {
    expect(authorLabel('bot', 'Acme helper')).toBe('Acme helper');
    expect(authorLabel('visitor')).toBe('Visitor');
    expect(authorLabel('operator', 'Acme helper', 'Ana')).toBe('Ana');
    expect(authorLabel('operator', 'Acme helper')).toBe('Team');
    expect(authorLabel('event')).toBe('');
  });

  it('names who handles a conversation, the signed-in person as "You"', () => {
    expect(assigneeLabel(null, 'usr_1')).toBeNull();
    expect(assigneeLabel({ id: 'usr_1', name: 'Ana Owner' }, 'usr_1')).toBe('You');
    expect(assigneeLabel({ id: 'usr_2', name: 'bo@example.com' }, 'usr_1')).toBe('bo@example.com');
  });

  it('names a visitor by what the site said, or a short tag of the session', () => {
    expect(visitorName('  ana@example.com ', 'abc')).toBe('ana@example.com');
    expect(visitorName(null, '3f2a9c1e-77b0-4c1d-9e2f-00aa11bb22cc')).toBe('Visitor bb22cc');
    expect(visitorName(undefined, '---')).toBe('Visitor ---');
  });

  it('previews what was said last, by whom; an image without words is said so', () => {
    const thread = (author: string, text: string) =>
      ({ bot_name: 'Acme helper', last_message: { author, text } }) as unknown as Parameters<typeof preview>[0];
    expect(preview(thread('visitor', 'Where is\n my   parcel?'))).toBe('Visitor: Where is my parcel?');
    expect(preview(thread('bot', 'It left today.'))).toBe('Acme helper: It left today.');
    expect(preview(thread('visitor', '[image]'))).toBe('Visitor: Sent an image');
    expect(preview({ bot_name: 'x' } as unknown as Parameters<typeof preview>[0])).toBe('No messages yet');
  });

  it('announces new messages and events in words a screen reader can say', () => {
    const m = (over: Record<string, unknown>) =>
      ({ id: 'm', author: 'event', text: 'raw', at: 0, ...over }) as unknown as Parameters<typeof announcementOf>[0];
    expect(announcementOf(m({ event: { kind: 'rating', rating: 'down' } }))).toBe(
      'The visitor rated an answer not helpful.',
    );
    expect(announcementOf(m({ event: { kind: 'satisfaction', score: 4 } }))).toBe('The visitor rated the help 4 of 5.');
    expect(announcementOf(m({ event: { kind: 'contact' } }))).toBe('The visitor left a contact.');
    expect(announcementOf(m({ author: 'operator', text: 'On it.' }))).toBe('Team: On it.');
    expect(announcementOf(m({ author: 'visitor', text: '', attachment: { url: '/media/x' } }))).toBe(
      'The visitor sent an image.',
    );
  });

  it('says each status in words, and clips long quotes', () => {
    expect(statusInfo('waiting')).toEqual({ label: 'Waiting', tone: 'warning' });
    expect(statusInfo('operator').label).toBe('With a person');
    expect(statusInfo('later-status').label).toBe('later-status');
    expect(clip('a'.repeat(200))).toHaveLength(140);
    expect(clip('a'.repeat(200)).endsWith('…')).toBe(true);
    expect(clip(' short\ntext ')).toBe('short text');
  });

  it('links a contact the way it can be reached: mail, phone, or not at all', () => {
    expect(contactHref('ana@example.com')).toBe('mailto:ana@example.com');
    expect(contactHref('+49 (30) 123-456')).toBe('tel:+4930123456');
    expect(contactHref('ask at the front desk')).toBeUndefined();
    expect(contactHref('javascript:alert(1)')).toBeUndefined();
  });

  it('announces the requests that arrived since the last read, not the first read', () => {
    const t = (session: string, status: string, visitor: string | null = null) => ({
      bot_id: 'bot_1',
      session_id: session,
      status,
      bot_name: 'Acme helper',
      visitor_name: visitor,
      visitor_user: null,
    });
    const first = [t('s1', 'waiting'), t('s2', 'bot')];
    expect(arrivalsAnnouncement(undefined, first)).toBe('');
    const known = statusesOf(first);
    // Still waiting: nothing new.
    expect(arrivalsAnnouncement(known, first)).toBe('');
    // One conversation went to waiting: named, with its agent.
    expect(arrivalsAnnouncement(known, [t('s1', 'waiting'), t('s2', 'waiting', 'Ana')])).toBe(
      'New request from Ana, Acme helper.',
    );
    // Several at once: counted.
    expect(arrivalsAnnouncement(known, [t('s2', 'waiting'), t('s3', 'waiting')])).toBe('2 new requests.');
  });
});
