/**
 * The platform's periodic housekeeping.
 * The contract between the services (client side), the workflow and its activities: nothing here may import Node
 * built-ins or anything outside `workflows/` but the workflow SDK, since it is bundled into the workflow sandbox.
 */

export const MAINTENANCE_SCHEDULE_ID = 'maintenance';
