/**
 * History pages of logs and metrics go through job → tasks → attempts (there is no root
 * field for one attempt yet). The API's cost limit (GRAPHQL_MAX_COST, 50,000) multiplies
 * the unbounded `tasks` and `attempts` lists by 20 each, so one page holds only a few dozen
 * lines; web/test/queryCost.test.ts checks these sizes against the real limit. Live lines
 * (the jobEvents subscription) are not limited by this.
 */
export const LOG_PAGE = 24;
export const METRIC_PAGE = 24;
export const EVENTS_PAGE = 500;
