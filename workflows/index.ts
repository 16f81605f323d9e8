// The worker bundles this file: every workflow the platform runs is exported from here.
export { maintenanceWorkflow } from './maintenance';
