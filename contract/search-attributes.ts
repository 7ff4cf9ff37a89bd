// Search attributes Tandem registers and sets, so operators can filter runs in visibility
// (`tandem runs list --tenant …`, the Web UI). Sandbox-safe: workflows upsert the stage.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const SA_TENANT = defineSearchAttributeKey('TandemTenant', SearchAttributeType.KEYWORD);
export const SA_PIPELINE = defineSearchAttributeKey('TandemPipeline', SearchAttributeType.KEYWORD);
export const SA_STAGE = defineSearchAttributeKey('TandemStage', SearchAttributeType.KEYWORD);
export const SA_SITE = defineSearchAttributeKey('TandemSite', SearchAttributeType.KEYWORD);
/** At a migrating site: the pool the run's jobs were routed to, "tandem" or "legacy". */
export const SA_POOL = defineSearchAttributeKey('TandemPool', SearchAttributeType.KEYWORD);

export const TANDEM_SEARCH_ATTRIBUTES = [SA_TENANT, SA_PIPELINE, SA_STAGE, SA_SITE, SA_POOL];
