import type { Config } from '../config';
import { type ObjectStore, createS3Store } from './s3';

/** The bucket of attached images when MEDIA_STORE=s3; undefined when they are kept in Postgres (the default). */
export function mediaBucketOf(
  config: Pick<
    Config,
    | 'MEDIA_STORE'
    | 'MEDIA_S3_ENDPOINT'
    | 'MEDIA_S3_BUCKET'
    | 'MEDIA_S3_REGION'
    | 'MEDIA_S3_ACCESS_KEY_ID'
    | 'MEDIA_S3_SECRET_ACCESS_KEY'
  >,
): ObjectStore | undefined {
  if (config.MEDIA_STORE !== 's3') return undefined;
  // parseConfig has checked that every MEDIA_S3_* setting is there.
  return createS3Store({
    endpoint: config.MEDIA_S3_ENDPOINT!,
    bucket: config.MEDIA_S3_BUCKET!,
    region: config.MEDIA_S3_REGION,
    accessKeyId: config.MEDIA_S3_ACCESS_KEY_ID!,
    secretAccessKey: config.MEDIA_S3_SECRET_ACCESS_KEY!,
  });
}
