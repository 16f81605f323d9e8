/**
 * test/workflow/search-attributes.test.ts, unchanged, against the production shape (test/cluster/global-setup.ts): the
 * real Temporal server's SQL visibility tells known search attributes from unknown ones.
 */
import '../workflow/search-attributes.test';
