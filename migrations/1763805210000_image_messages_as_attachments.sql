-- Up Migration

-- An image a visitor sent is its `attachment` on the wire, not the marker `[image] <url>` in the text
-- (docs/decisions/158-typed-replies.md). Messages already keep it so (`attachment`, empty text); the `visitor_message`
-- webhooks recorded before this change carry the marker: those still waiting or failed (a person may send them
-- again) get the attachment, taken from the message it names, and an empty text.
UPDATE webhook_deliveries d
   SET body = ((d.body::jsonb - 'text')
               || jsonb_build_object('text', '',
                                     'attachment', m.attachment || jsonb_build_object('url', substring(d.body::jsonb->>'text' FROM 9))))::text
  FROM messages m
 WHERE d.event = 'visitor_message'
   AND d.body::jsonb->>'text' LIKE '[image] %'
   AND m.session_id = d.session_id
   AND m.attachment->>'id' = regexp_replace(d.body::jsonb->>'text', '^.*/', '');

-- Down Migration

UPDATE webhook_deliveries
   SET body = ((body::jsonb - 'attachment')
               || jsonb_build_object('text', '[image] ' || (body::jsonb->'attachment'->>'url')))::text
 WHERE event = 'visitor_message' AND body::jsonb ? 'attachment';
