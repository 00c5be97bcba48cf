/**
 * History pages of logs and metrics come from the root `attempt(id)` field, so the API's
 * cost limit (GRAPHQL_MAX_COST, 50,000: a list multiplies its children's cost by `first`)
 * is spent on one list only. Each line costs 5 — seq, stream, text, ts and the
 * `__typename` Apollo Client adds to every selection — so 10,000 lines (the most
 * `logs(first:)` returns) would cost 50,004 and be refused; 9,000 cost 45,004. A
 * 100,000-line log loads in twelve requests. web/test/queryCost.test.ts checks these sizes
 * against the real limit, with the `__typename`s Apollo adds. Live lines (the jobEvents
 * subscription) are not limited by this.
 */
export const LOG_PAGE = 9_000;
export const METRIC_PAGE = 9_000;
export const EVENTS_PAGE = 500;
