/**
 * test/http/worker-crash.test.ts, unchanged, against the production shape (test/cluster/global-setup.ts): through the balancer
 * to two API replicas, turns run by two workers on a real Temporal server with SQL visibility.
 */
import '../http/worker-crash.test';
