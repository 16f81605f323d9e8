/**
 * test/http/temporal-outage.test.ts, unchanged, on the production shape: a real Temporal server of the file's own (its
 * four services stopped and started again, its Postgres kept), with a worker and an API of its own on the shape's
 * Postgres, so the shape's own server is not disturbed.
 */
import '../http/temporal-outage.test';
