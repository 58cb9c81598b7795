/**
 * Fencing calls to other services: the lease's token travels in the {@code Fencing-Token} header
 * ({@link dev.lease.fence.http.FencingTokenHeader}), and {@link dev.lease.fence.http.FencedRequest} handlers refuse
 * stale ones with 409 and missing or malformed ones with 428.
 */
package dev.lease.fence.http;
