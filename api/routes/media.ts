import { z } from 'zod';
import { errors } from '../../lib/errors';
import type { AppDeps } from '../deps';
import { type RouteDef, SENT_BY_HANDLER, route } from '../route';

const MediaParams = z.object({ id: z.string().min(1).max(100).describe('The attachment id (`attachment.id`)') });

/** Spec, Service: `GET /media/{id}` — an uploaded image, or 404 with the error body. */
export function mediaRoutes(deps: AppDeps): RouteDef[] {
  const { media } = deps.services;
  return [
    route({
      method: 'get',
      path: '/media/{id}',
      operationId: 'getMedia',
      tag: 'Service',
      summary: 'An image a visitor attached, with its content type; 404 when there is none (or it was erased).',
      description:
        'No key: the id (in `attachment.url` of the message holding it) is unguessable. Kept by browsers a few minutes at most, so an erased image does not outlive its erasure for long.',
      params: MediaParams,
      responses: { 200: { description: 'The image', contentType: 'image/*' } },
      errors: ['not_found', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        const file = await media.read(params.id);
        if (!file) throw errors.notFound('No such file');
        ctx.set('Cache-Control', 'private, max-age=300');
        ctx.set('X-Content-Type-Options', 'nosniff');
        // Shown in an <img> or opened alone, never run: nothing in it may load or execute anything.
        ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
        ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
        ctx.set('Content-Disposition', 'inline');
        ctx.etag = file.etag;
        ctx.type = file.contentType;
        if (ctx.fresh) {
          ctx.status = 304;
          return SENT_BY_HANDLER;
        }
        ctx.body = file.body;
        return SENT_BY_HANDLER;
      },
    }),
  ];
}
